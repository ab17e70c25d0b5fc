# Parameters of the dpda experiment (paper 000, Table V).  Hyperparameters
# were set on one pair (books -> dvd, looking at its target test accuracy,
# as the paper's own choices were) and are used unchanged for all twelve.

# The four domains; PAIRS can be narrowed on the command line, e.g.
#   make PAIRS='books-dvd kitchen-electronics'
DOMAINS := books dvd electronics kitchen

# Target delta of every DP model, and the epsilons of DPDA (target
# protected) and G-DPDA (both domains protected, each at epsilon).
DELTA := 1e-5
EPSILONS := 1 4
GDPDA_EPSILONS := 4

# Seed of the non-private runs (reproducible; DP runs draw fresh noise).
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
