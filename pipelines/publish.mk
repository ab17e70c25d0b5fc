# Publishing (pipelines/Makefile publish).  An experiment sets PUBLISH,
# the files of its output it publishes (copied into PUBLISH_DIR under
# their own names), PUBLISH_DERIVED those of them made from results.tsv
# (results.md, the plots); PUBLISH_GOALS, the targets that make them; GRID_ROWS,
# the number of rows of results.tsv its parameters declare; and
# GRID_REPS, if results.tsv has a reps column, the repeats of each row.
# `make publish-check` makes the goals, then stops make unless the table
# has the whole grid, every file is there and the derived ones are no
# older than the table;
# `make publish` then copies them.  Included last (the prerequisites are
# read where the rule is).
PUBLISH_DIR ?= results
GRID_REPS ?=
publish-check: $(PUBLISH_GOALS) ## make the report, check that it is complete and current
	@t=$(filter %/results.tsv,$(PUBLISH)); \
	n=$$(awk 'END { print NR - 1 }' $$t); \
	if [ "$$n" -ne $(GRID_ROWS) ]; then \
	    echo "publish: $$t: $$n rows, the parameters declare $(GRID_ROWS): not published" >&2; exit 1; fi; \
	$(if $(GRID_REPS),bad=$$(awk -F '\t' 'NR > 1 && $$4 != $(GRID_REPS) { print NR; exit }' $$t); \
	if [ -n "$$bad" ]; then \
	    echo "publish: $$t:$$bad: fewer repeats than the $(GRID_REPS) declared: not published" >&2; exit 1; fi;) \
	for f in $(PUBLISH); do \
	    if [ ! -s $$f ]; then echo "publish: $$f: missing or empty: not published" >&2; exit 1; fi; \
	done; \
	for f in $(PUBLISH_DERIVED); do \
	    if [ $$f -ot $$t ]; then echo "publish: $$f: older than $$t: not published" >&2; exit 1; fi; \
	done

publish: publish-check ## publish-check, then copy the report into PUBLISH_DIR
	mkdir -p $(PUBLISH_DIR)
	cp $(PUBLISH) $(PUBLISH_DIR)/

.PHONY: publish-check publish
