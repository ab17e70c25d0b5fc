/*
 * Unit tests of lib/format/feat: featurize's parameter check, the format
 * and dataset a path implies, --resize, and the readers of a label map,
 * a vocabulary and a CSV input (rows, dropped rows, learnt bounds).
 */
#include <string.h>

#include "feat.h"
#include "tap.h"

static FILE *
mem(const char *s)
{
	return fmemopen((void *)(uintptr_t)s, strlen(s), "r");
}

static int
label_map(const char *text, struct labcol *l, char msg[FEAT_MSG])
{
	FILE *fp = mem(text);
	int rc;

	labcol_init(l, 0, 0);
	rc = feat_read_label_map(l, fp, "map", msg);
	fclose(fp);
	return rc;
}

static int
vocab(const char *text, size_t max, char msg[FEAT_MSG])
{
	struct strtab v = { 0 };
	FILE *fp = mem(text);
	int rc = feat_read_vocab(&v, fp, "voc", max, msg);

	fclose(fp);
	strtab_free(&v);
	return rc;
}

int
main(void)
{
	struct feat_params p = { .format = FEAT_CSV, .label = "y" };
	struct csvlay_params cp = { .label = "2",
	    .missing = CSVLAY_MISS_DROP };
	struct feat_csv fc;
	struct scale sc = { 0 };
	struct labcol l;
	char msg[FEAT_MSG], name[8];
	uint64_t h, w;
	double row[2];
	FILE *fp;
	int rc, n;

	ok(feat_check_params(&p, msg) == NULL, "csv with a label");
	p.no_label = 1;
	ok(strcmp(feat_check_params(&p, msg), "--label and --no-label "
	    "exclude each other") == 0, "label and no-label");
	p.no_label = 0;
	p.resize = 1;
	ok(strcmp(feat_check_params(&p, msg), "--resize applies to idx input "
	    "only") == 0, "resize for csv: %s", msg);
	p.resize = 0;
	p.crop = 1;
	ok(strcmp(feat_check_params(&p, msg), "--crop-bbox applies to idx "
	    "input only") == 0, "crop for csv: %s", msg);
	p.format = FEAT_IDX;
	p.label = NULL;
	ok(strstr(feat_check_params(&p, msg), "--crop-bbox needs --resize")
	    != NULL, "crop without resize");
	p.resize = 1;
	ok(feat_check_params(&p, msg) == NULL, "crop with resize");
	p.crop = p.resize = 0;
	p.binary = p.scale = 1;
	ok(strstr(feat_check_params(&p, msg), "--binary excludes --scale")
	    != NULL, "binary and scale");
	p.binary = p.scale = 0;
	{
		unsigned t = 99;
		ok(feat_parse_crop(NULL, &t) == 0 && t == 0, "crop: default 0");
		ok(feat_parse_crop("254", &t) == 0 && t == 254, "crop: 254");
		ok(feat_parse_crop("255", &t) == PV_E_RANGE &&
		    feat_parse_crop("-1", &t) == PV_E_RANGE &&
		    feat_parse_crop("", &t) == PV_E_RANGE &&
		    feat_parse_crop("3x", &t) == PV_E_RANGE, "crop: 255, -1, "
		    "empty, 3x refused");
	}
	p.format = FEAT_TEXT;
	p.label = "name";
	ok(strstr(feat_check_params(&p, msg), "text input takes the index")
	    != NULL, "text label by name");
	p.label = "1";
	p.classes = 3;
	p.label_map = "m";
	ok(strcmp(feat_check_params(&p, msg), "--classes and --label-map "
	    "exclude each other") == 0, "classes and label map");
	p.classes = 0;
	p.label_map = "-";
	ok(strcmp(feat_check_params(&p, msg), "--label-map needs a file, "
	    "not stdin") == 0, "label map on stdin");

	ok(feat_format_from_path("a/train-images-idx3-ubyte.gz") == FEAT_IDX,
	    "idx by name");
	ok(feat_format_from_path("x.txt.zst") == FEAT_TEXT, "text by name");
	ok(feat_format_from_path(NULL) == FEAT_CSV, "stdin is csv");
	feat_dataset_from_path("dir/My-Data.v2.csv", name, sizeof name);
	ok(strcmp(name, "my_data") == 0, "dataset name: %s", name);
	feat_dataset_from_path("-", name, sizeof name);
	ok(strcmp(name, "stdin") == 0, "dataset of stdin");
	feat_dataset_from_path(".hidden", name, sizeof name);
	ok(strcmp(name, "data") == 0, "dataset of an empty base");

	ok(feat_parse_resize("14x7", 4096, &h, &w) == 0 && h == 14 && w == 7,
	    "resize 14x7");
	ok(feat_parse_resize("0x7", 4096, &h, &w) == PV_E_RANGE, "side 0");
	ok(feat_parse_resize("5000x7", 4096, &h, &w) == PV_E_RANGE,
	    "side past max");
	ok(feat_parse_resize("7x", 4096, &h, &w) == PV_E_RANGE, "no width");

	ok(label_map("cat\r\ndog\n", &l, msg) == 0 && l.map.n == 2,
	    "label map of two");
	labcol_free(&l);
	ok(label_map("cat\n\ndog\n", &l, msg) == PV_E_FORMAT &&
	    strcmp(msg, "map:2: empty line: a label map has one label a line")
	    == 0, "empty line: %s", msg);
	labcol_free(&l);
	ok(label_map("cat\ncat\n", &l, msg) == PV_E_FORMAT &&
	    strcmp(msg, "map:2: label 'cat' is listed twice") == 0,
	    "listed twice: %s", msg);
	labcol_free(&l);
	ok(label_map("", &l, msg) == PV_E_FORMAT &&
	    strcmp(msg, "map: empty label map") == 0, "empty map");
	labcol_free(&l);

	ok(vocab("good\ngood day\n", 10, msg) == 0, "vocabulary");
	ok(vocab("good\nBad\n", 10, msg) == PV_E_FORMAT &&
	    strcmp(msg, "voc:2: 'Bad' is not a token of [a-z0-9'] or two "
	    "joined by a space") == 0, "bad entry: %s", msg);
	ok(vocab("a\nb\nc\n", 2, msg) == PV_E_LIMIT &&
	    strcmp(msg, "voc: more than 2 entries") == 0, "too many");
	ok(vocab("", 2, msg) == PV_E_FORMAT, "empty vocabulary");

	fp = mem("a,b,y\n1,2,x\n3,,y\n5,6,z\n");
	ok(feat_csv_open(&fc, fp, "in", &cp, msg) == 0 && fc.L.d == 2,
	    "csv open: %d features", (int)fc.L.d);
	for (n = 0; (rc = feat_csv_next(&fc, row, msg)) == 1; n++)
		;
	ok(rc == 0 && n == 2 && fc.L.dropped == 1 && row[0] == 5,
	    "two rows, one dropped");
	feat_csv_close(&fc);
	fclose(fp);
	fp = mem("");
	ok(feat_csv_open(&fc, fp, "in", &cp, msg) == PV_E_FORMAT &&
	    strcmp(msg, "in: empty input: no header or records") == 0,
	    "empty csv");
	fclose(fp);
	cp.missing = CSVLAY_MISS_ERROR;
	fp = mem("a,b,y\n1,x,u\n");
	ok(feat_csv_open(&fc, fp, "in", &cp, msg) == 0 &&
	    feat_csv_next(&fc, row, msg) == PV_E_FORMAT &&
	    strncmp(msg, "in:2: ", 6) == 0, "bad value: %s", msg);
	feat_csv_close(&fc);
	fclose(fp);

	fp = mem("0,10,u\n-4,2,v\n");
	ok(feat_learn_bounds(&sc, fp, "pub", &cp, 2, msg) == 0 && sc.on,
	    "bounds learnt");
	fclose(fp);
	scale_free(&sc);
	fp = mem("0,10,u\n");
	ok(feat_learn_bounds(&sc, fp, "pub", &cp, 3, msg) == PV_E_FORMAT &&
	    strcmp(msg, "pub: 2 features, but the input has 3") == 0,
	    "feature count differs: %s", msg);
	fclose(fp);
	scale_free(&sc);
	return tap_done();
}
