# coral-check: non-private CORAL under the CORAL paper's protocol (Sun,
# Feng and Saenko, AAAI 2016; data/office-caltech10-surf/README.md), to
# check privada's covest + coral-align against the published numbers:
# every domain L1-normalised and z-scored over the whole domain
# (zscore.awk: NOT private), CC_PER source rows per class drawn in each of
# CC_TRIALS trials (sample.awk, public seeds), CORAL with lambda 1, a
# linear classifier (logistic regression, not the paper's linear SVM) with
# its L2 weight decay picked from CC_GRID by 2-fold cross-validation on the
# source, the whole target as the test set (coral-check.sh).  Trial 0 uses
# the whole source (no subsampling): where alignment does not help.
#   make coral-check        $(OUT)/coral-check/coral-check.md
#   make -j2 coral-check CC_TRIALS=10   fewer trials (each is about 1 s of CPU)
CC_TRIALS := 20
CC_PER := 20
CC_GRID := 1e-1 1 10
CC := $(OUT)/coral-check
CC_TASKS := $(foreach s,$(SURF_DOMAINS),$(foreach t,$(filter-out $(s),$(SURF_DOMAINS)),$(s)-$(t)))
# Parameter stamps (common.mk): the trials' options, and the grid.
$(call param_group,cc,CC_PER CC_GRID)
$(call param_group,cc_grid,SURF_DOMAINS CC_TRIALS)
CC_ROWS := $(foreach t,$(CC_TASKS),$(foreach i,0 $(shell seq 1 $(CC_TRIALS)),$(CC)/$(t)-t$(i).tsv))

coral-check: $(CC)/coral-check.md ## non-private CORAL under the CORAL paper's protocol
	@cat $<

$(CC)/%.csv: $(DIR_surf)/%.csv.zst zscore.awk | $(CC)
	zstd -qdc $< | awk -f zscore.awk > $@
$(CC)/%.tns: $(CC)/%.csv $(B)/featurize
	$(B)/featurize -q --label label --dataset $* --dtype f64 -o $@ $<
$(CC)/%.ct.tns: $(CC)/%.tns $(B)/covest
	$(B)/covest -q --sigma 0 --clip 1e6 --mean released --subspaces none -o $@ $<

define cc_rules
$(CC)/$(1)-$(2)-t%.tsv: $(CC)/$(1).csv $(CC)/$(2).tns $(CC)/$(2).ct.tns coral-check.sh sample.awk $(B)/dpsgd-train $(B)/coral-align $(PARAMS_cc)
	./coral-check.sh $(B) $$< $(1) $(CC)/$(2).tns $(CC)/$(2).ct.tns $$* \
	    $$(if $$(filter 0,$$*),0,$(CC_PER)) '$(CC_GRID)' | sed 's/^/$(1)->$(2)\t/' > $$@
endef
$(foreach t,$(CC_TASKS),$(eval $(call cc_rules,$(word 1,$(subst -, ,$(t))),$(word 2,$(subst -, ,$(t))))))

$(CC)/trials.tsv: $(CC_ROWS) $(PARAMS_cc_grid)
	cat $(CC_ROWS) > $@

$(CC)/coral-check.md: cc-report.awk $(CC)/trials.tsv $(OUT)/published.tsv
	awk -v trials=$(CC_TRIALS) -v per=$(CC_PER) -v grid='$(CC_GRID)' -v refs=$(OUT)/published.tsv \
	    -f cc-report.awk $(CC)/trials.tsv > $@

$(CC):
	mkdir -p $@

.PHONY: coral-check
