# Included first by every experiment (STYLE.md section 8).
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
MAKEFLAGS += --warn-undefined-variables --no-builtin-rules
.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:
export LC_ALL := C
export OPENBLAS_NUM_THREADS := 1
.DEFAULT_GOAL := all

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
B := $(TOP)/build/bin
DATA := $(TOP)/data
# The experiment's directory, and the command that removes the temporary
# files a tool killed by SIGKILL can leave there (.NAME.privada-tmp.XXXXXX,
# privada(7)); every experiment's clean runs it.
PIPE_DIR := $(abspath $(dir $(firstword $(MAKEFILE_LIST))))
CLEAN_TMP := find $(PIPE_DIR) -name '.*.privada-tmp.*' -type f -exec rm -f -- {} +

# featurize's options for the Amazon reviews of an experiment's
# AMZ_FEATURES (params.mk): counts (none) or binary presence (--binary: a
# per-value map, no privacy cost).
amz_feat = $(if $(filter binary,$(AMZ_FEATURES)),--binary,$(if $(filter counts,$(AMZ_FEATURES)),,$(error AMZ_FEATURES must be counts or binary, not '$(AMZ_FEATURES)')))

help: ## list this experiment's targets
	@grep -hE '^[a-z%./-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

# Parameter stamps (issue 15).  A value overridden on the command line
# (make EPOCHS=5) does not touch params.mk, so a dependency on params.mk
# alone leaves the outputs of the old value in place.  Each experiment
# therefore groups its parameters by the steps they reach:
#
#   $(call param_group,NAME,VARS)
#
# sets PARAMS_NAME to the stamp $(PARAM_DIR)/NAME, a file of VAR=value
# lines, one per variable of VARS.  The stamp is remade (and every target
# that lists $(PARAMS_NAME) as a prerequisite with it) only when one of
# those values differs from the file's: make -n and make -q show what a
# changed value rebuilds, write nothing, and report an unchanged
# configuration as up to date.  $(call param_check) (after the groups)
# stops make if a variable that params.mk sets is in no group and not in
# PARAMS_IN_PATH (the parameters that name the outputs themselves, such as
# the epsilons, the tasks or the repeats: changing them makes other files).
PARAM_DIR = $(OUT)/params
PARAMS_COVERED :=
PARAMS_IN_PATH ?=
param_text = $(strip $(foreach v,$(1),$(v)=$($(v)))).
param_same = $(if $(subst $(1),,$(2))$(subst $(2),,$(1)),,same)
param_q = '$(subst ','\'',$(1))'
define param_group_rules
PARAMS_$(1) := $(PARAM_DIR)/$(1)
PARAMS_COVERED += $(2)
$(if $(call param_same,$(call param_text,$(2)),$(strip $(file <$(PARAM_DIR)/$(1))).),,\
$(PARAM_DIR)/$(1): FORCE
	@mkdir -p $$(@D)
	@printf '%s\n' $(foreach v,$(2),$(call param_q,$(v)=$($(v)))) > $$@)
endef
param_group = $(eval $(call param_group_rules,$(1),$(2)))
PARAMS_FILE ?= params.mk
PARAMS_DECLARED = $(shell sed -n 's/^\([A-Za-z_][A-Za-z0-9_]*\)[[:space:]]*[:?+]*=.*/\1/p' $(PARAMS_FILE))
param_check = $(if $(filter-out $(PARAMS_COVERED) $(PARAMS_IN_PATH),$(PARAMS_DECLARED)),\
  $(error params.mk: in no parameter group (common.mk, param_group): $(filter-out $(PARAMS_COVERED) $(PARAMS_IN_PATH),$(PARAMS_DECLARED))))

FORCE:
.PHONY: FORCE

# The stamp every report carries (issue 16): the tools' version, the
# commit they were built from (with "-dirty" when the tree had changes)
# and the date.  Computed when a report is made (a recursive variable).
RESULT_STAMP = privada $(shell $(B)/featurize --version 2>/dev/null | awk '{ print $$NF }'), commit $(shell git -C $(TOP) describe --always --dirty 2>/dev/null || echo unknown), $(shell date -u +%Y-%m-%d)

# Slurm (issue 20; README.md, "Running at scale").  With SLURM=1 the heavy
# recipes of an experiment (teacher training, model collection, DP-SGD
# runs, covariance releases: the targets each Makefile passes to
# slurm_jobs) run as Slurm jobs through pipelines/srun-shell, a
# target-specific SHELL: .SHELLFLAGS, pipefail and .DELETE_ON_ERROR stay
# as they are, every other recipe (and every $(shell)) runs where make
# runs, and no recursive make is ever wrapped.  Each recipe line is one
# job.  Under salloc or sbatch (pipelines/slurm.sbatch) the lines are job
# steps of that allocation instead.  SLURM_CPUS: CPUs per job;
# SLURM_OPTS: more srun options (-p PARTITION, --time, --mem, ...).  The
# results do not depend on where a recipe runs: the same seeds give the
# same tables (tests/slurm.bats).
SLURM ?=
SLURM_CPUS ?= 1
SLURM_OPTS ?=
ifneq ($(filter-out 0 1,$(SLURM)),)
$(error SLURM=$(SLURM): 1 (heavy recipes as Slurm jobs) or 0/empty (local))
endif
ifeq ($(SLURM),1)
export PRIVADA_SRUN_CPUS := $(SLURM_CPUS)
export PRIVADA_SRUN_OPTS := $(SLURM_OPTS)
endif
# $(call slurm_jobs,TARGETS): the recipes of TARGETS (names or % patterns)
# run through srun under SLURM=1; nothing changes otherwise.
slurm_jobs = $(if $(filter 1,$(SLURM)),$(eval $(1): private SHELL := $(TOP)/pipelines/srun-shell))

# The budget store (issue 18; rdp-account(1), "Budget store").  An
# experiment whose DP steps charge a store sets STORE_DATASETS (the
# datasets it protects), STORE_EPSILON (the allowance of one pass of its
# grid on each) and STORE_DEPS (the parameter stamps and tools whose change
# remakes DP steps), then calls $(call store_setup), lists $(STORE_READY)
# as an order-only prerequisite of its DP steps and runs $(STORE_REPORT)
# at the end of its report.  The DP tools find the store in the
# environment (PRIVADA_BUDGET_STORE) and charge every release to it before
# writing; a refusal (exit 77) stops make.  STORE_READY creates the store
# once (it is never remade: it keeps every charge, also of outputs make
# later replaces) and, whenever STORE_DEPS change (a new configuration
# whose steps make remakes), raises each dataset's budget to what it has
# spent plus STORE_EPSILON: every configuration make runs gets one grid's
# allowance, and the store shows what all of them together cost the data.
# The store accounts each dataset at DELTA: another DELTA needs another
# store (make STORE=...).  make STORE= runs without a store.
STORE ?= $(OUT)/budget.db
STORE_DATASETS ?=
STORE_EPSILON ?=
STORE_DEPS ?=
STORE_READY :=
# A postgresql:// (or postgres://) STORE is a URI, taken as it is; any
# other STORE is a file, made absolute for the tools.
store_uri = $(filter postgresql://% postgres://%,$(STORE))
store_path = $(if $(store_uri),$(STORE),$(abspath $(STORE)))
# (Through PATH: make -n lists it, and a report is not a step; the tests
# find the steps in make -n by the tools' paths.)
STORE_REPORT = $(if $(STORE),echo "Budget store $(abspath $(STORE)) (every release made here, composed per dataset):"; \
	PATH='$(B)':"$$PATH" rdp-account store status '$(STORE)' | grep '^dataset',echo "No budget store (STORE is empty)")
store_raise = $(B)/rdp-account store set $(STORE) --dataset $(1) --delta $(DELTA) --epsilon $$$$($(B)/rdp-account store status --format tsv $(STORE) | awk -F '\t' -v d=$(1) -v e=$(STORE_EPSILON) '$$$$1 == "dataset" && $$$$2 == d { b = $$$$3; e += $$$$5 } END { print (b + 0 > e + 0 ? b : e) }')
define store_rules
export PRIVADA_BUDGET_STORE := $(store_path)
STORE_READY := $(PARAM_DIR)/store.ready
$(PARAM_DIR)/store.ready: $(PARAMS_store) $(STORE_DEPS) $(if $(store_uri)$(wildcard $(STORE)),,FORCE)
	@mkdir -p $$(@D) $(if $(store_uri),,$$(dir $(STORE)))
	$(if $(store_uri),$(B)/rdp-account store status '$(STORE)' >/dev/null 2>&1,test -e $(STORE)) || $(B)/rdp-account store init '$(STORE)'
	$(foreach d,$(STORE_DATASETS),$(call store_raise,$(d)) &&) touch $$@
endef
store_setup = $(if $(STORE),$(call param_group,store,STORE STORE_DATASETS STORE_EPSILON DELTA)$(eval $(store_rules)))
