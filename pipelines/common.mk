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

help: ## list this experiment's targets
	@grep -hE '^[a-z%./-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'
