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

help: ## list this experiment's targets
	@grep -hE '^[a-z%./-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'
