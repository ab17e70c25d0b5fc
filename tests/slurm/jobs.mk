# tests/slurm.bats: recipes under SLURM=1 through pipelines/common.mk, as
# an experiment's heavy recipes run.  Each target records the Slurm job
# and step it ran in ("JOBID STEPID"; empty when it ran locally).
#
#   make -f jobs.mk OUT=DIR SLURM=1 N=3 SLEEP=0   DIR/1.job ... DIR/N.job
#   make -f jobs.mk OUT=DIR SLURM=1 DIR/fail.job  writes, then fails
include $(dir $(lastword $(MAKEFILE_LIST)))../../pipelines/common.mk

OUT ?= out
N ?= 3
SLEEP ?= 0

$(call slurm_jobs,$(OUT)/%.job)

all: $(foreach i,$(shell seq 1 $(N)),$(OUT)/$(i).job)

# A partial output, then a failure: .DELETE_ON_ERROR removes it.
$(OUT)/fail.job: | $(OUT)
	echo "$${SLURM_JOB_ID:-} $${SLURM_STEP_ID:-}" > $@ && exit 3

$(OUT)/%.job: | $(OUT)
	sleep $(SLEEP) && echo "$${SLURM_JOB_ID:-} $${SLURM_STEP_ID:-}" > $@

$(OUT):
	mkdir -p $@
