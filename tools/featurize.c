/*
 * featurize: turn raw data (CSV, IDX images, text) into a tensor stream of
 * features and labels.  The usage, options and main; the other parts are
 * under tools/featurize/ (featurize.h).
 */
#include <float.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "crop.h"
#include "csvlay.h"
#include "feat.h"
#include "featurize/featurize.h"
#include "labcol.h"
#include "labels.h"
#include "scale.h"
#include "ledger.h"
#include "scatter.h"
#include "opts.h"
#include "tstream.h"

enum {
	OPT_CLASSES = OPTS_FIRST_TOOL, OPT_CLIP, OPT_CLIP_ROWS, OPT_COLUMNS,
	OPT_BINARY, OPT_CROP_BBOX, OPT_DROP_UNKNOWN, OPT_DTYPE, OPT_FORMAT,
	OPT_HASH_DIM, OPT_HEADER, OPT_GROUP_NORM, OPT_IMAGE, OPT_LABEL,
	OPT_LAYOUT, OPT_LABEL_MAP, OPT_LABELS, OPT_MISSING, OPT_NO_LABEL, OPT_NORMALIZE,
	OPT_RESIZE, OPT_SCALE, OPT_SCALE_FROM, OPT_SCATTER, OPT_THREADS,
	OPT_VOCAB
};

__attribute__((noreturn)) static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs("usage: featurize [-fhqV] [-o file] [--binary] "
	    "[--classes k | --label-map file]\n"
	    "                 [--clip bound] [--columns list] "
	    "[--crop-bbox[=t]]\n"
	    "                 [--dataset name] [--drop-unknown] "
	    "[--dtype type]\n"
	    "                 [--format format] [--group-norm g] "
	    "[--hash-dim n]\n"
	    "                 [--header when] [--image size] "
	    "[--label column | --no-label]\n"
	    "                 [--labels file] [--layout order] [--level level]\n"
	    "                 [--missing policy] "
	    "[--normalize kind] [--resize size]\n"
	    "                 [--scale lo:hi | --scale-from file] "
	    "[--scatter j[:l]]\n"
	    "                 [--threads n] [--vocab file] [file]\n", fp);
	if (status == 0)
		fputs("\n"
		    "  -f, --force            write to a terminal\n"
		    "  -h, --help             show this help\n"
		    "  -o, --output FILE      write FILE (through a temporary "
		    "file), not stdout\n"
		    "  -q, --quiet            no warnings, no progress\n"
		    "  -V, --version          show the version\n"
		    "      --binary           presence: every value other than "
		    "0 becomes 1 (first)\n"
		    "      --classes K        labels are the public classes 0 "
		    ".. K-1\n"
		    "      --clip C           scale rows of L2 norm above C down "
		    "to C (last step)\n"
		    "      --columns LIST     CSV features: indices from 0, "
		    "ranges A-B, names\n"
		    "      --crop-bbox[=T]    idx: crop to pixels > T (default "
		    "0), pad square, resize\n"
		    "      --dataset NAME     protected dataset, [a-z0-9_]+ "
		    "(default: file name)\n"
		    "      --drop-unknown     drop rows whose label is not "
		    "declared (not an error)\n"
		    "      --dtype TYPE       type of X: f32 (default) or f64\n"
		    "      --format FORMAT    csv, idx or text (default: by file "
		    "name, else csv)\n"
		    "      --group-norm G     --scatter: normalise each row's "
		    "channels in G groups\n"
		    "      --hash-dim N       text: hash buckets (default 1024)\n"
		    "      --header WHEN      CSV header: auto (default), yes, "
		    "no\n"
		    "      --image HxW        CSV: each row is an HxW image "
		    "(for --scatter)\n"
		    "      --label COLUMN     CSV label column, name or index; "
		    "text: field index\n"
		    "      --label-map FILE   the PUBLIC label set: line i is "
		    "class i\n"
		    "      --labels FILE      idx: the labels file\n"
		    "      --layout ORDER     --scatter: a row's order, chw "
		    "(default) or hwc\n"
		    "      --level N          zstd level of the output (default "
		    "1)\n"
		    "      --missing POLICY   bad or missing values: error "
		    "(default), zero, drop-row\n"
		    "      --no-label         CSV: no label column, X only\n"
		    "      --normalize KIND   divide each row by its l1 or l2 "
		    "norm\n"
		    "      --resize HxW       idx: resize images by area "
		    "averaging\n"
		    "      --scale LO:HI      map features from [LO,HI] to [0,1], "
		    "clamping\n"
		    "      --scale-from FILE  CSV: per-feature bounds from a "
		    "PUBLIC file\n"
		    "      --scatter J[:L]    2-D scattering, order 2, J scales, "
		    "L angles (default 8)\n"
		    "      --threads N        --scatter: threads (default: the "
		    "processors online)\n"
		    "      --vocab FILE       text: one token or bigram a line, "
		    "a column each\n", fp);
	exit(status);
}

/* ---- option values ---- */

static void
parse_scale(struct opts *o, const char *arg)
{
	const char *colon = strchr(arg, ':');
	char lo[64];

	if (colon == NULL || (size_t)(colon - arg) >= sizeof lo)
		cli_usage_error("invalid --scale '%s': expected LO:HI", arg);
	memcpy(lo, arg, (size_t)(colon - arg));
	lo[colon - arg] = '\0';
	o->scale_lo = cli_double("--scale", lo, -DBL_MAX, DBL_MAX);
	o->scale_hi = cli_double("--scale", colon + 1, -DBL_MAX, DBL_MAX);
	if (!(o->scale_hi > o->scale_lo) ||
	    !isfinite(o->scale_hi - o->scale_lo))
		cli_usage_error("invalid --scale '%s': needs LO < HI", arg);
	o->p.scale = 1;
}

/* ---- main ---- */

int
main(int argc, char **argv)
{
	static const char *const dtypes[] = { "f32", "f64", NULL };
	static const char *const formats[] = { "csv", "idx", "text", NULL };
	static const char *const headers[] = { "auto", "yes", "no", NULL };
	static const char *const missings[] = { "error", "zero", "drop-row",
	    NULL };
	static const char *const norms[] = { "l1", "l2", NULL };
	static const char *const layouts[] = { "chw", "hwc", NULL };
	static const struct option longopts[] = {
		{ "binary", no_argument, NULL, OPT_BINARY },
		{ "classes", required_argument, NULL, OPT_CLASSES },
		{ "clip", required_argument, NULL, OPT_CLIP },
		{ "clip-rows", required_argument, NULL, OPT_CLIP_ROWS },
		{ "columns", required_argument, NULL, OPT_COLUMNS },
		{ "crop-bbox", optional_argument, NULL, OPT_CROP_BBOX },
		{ "dataset", required_argument, NULL, OPTS_DATASET },
		{ "drop-unknown", no_argument, NULL, OPT_DROP_UNKNOWN },
		{ "dtype", required_argument, NULL, OPT_DTYPE },
		{ "force", no_argument, NULL, 'f' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "group-norm", required_argument, NULL, OPT_GROUP_NORM },
		{ "hash-dim", required_argument, NULL, OPT_HASH_DIM },
		{ "header", required_argument, NULL, OPT_HEADER },
		{ "help", no_argument, NULL, 'h' },
		{ "image", required_argument, NULL, OPT_IMAGE },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "label-map", required_argument, NULL, OPT_LABEL_MAP },
		{ "labels", required_argument, NULL, OPT_LABELS },
		{ "layout", required_argument, NULL, OPT_LAYOUT },
		{ "level", required_argument, NULL, OPTS_LEVEL },
		{ "missing", required_argument, NULL, OPT_MISSING },
		{ "no-label", no_argument, NULL, OPT_NO_LABEL },
		{ "normalize", required_argument, NULL, OPT_NORMALIZE },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "resize", required_argument, NULL, OPT_RESIZE },
		{ "scale", required_argument, NULL, OPT_SCALE },
		{ "scale-from", required_argument, NULL, OPT_SCALE_FROM },
		{ "scatter", required_argument, NULL, OPT_SCATTER },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "version", no_argument, NULL, 'V' },
		{ "vocab", required_argument, NULL, OPT_VOCAB },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { .c = OPTS_COMMON_INIT, .dtype = TS_F32,
	    .hash_dim = DEFAULT_HASH_DIM };
	struct out ou = { 0 };
	struct infile *in, *side = NULL, *lmap = NULL, *inputs[3];
	struct ts_meta sm = { 0 };
	const char *path, *bad;
	char name[MAX_DATASET + 1], err[256], msg[FEAT_MSG];
	FILE *ofp;
	int ch, rc, ninputs = 1;

	cli_init(argv[0], argc, argv);
	/* getopt names the program by argv[0]; messages use the short name. */
	argv[0] = (char *)(uintptr_t)cli_prog();
	while ((ch = getopt_long(argc, argv, "fho:qV", longopts, NULL)) != -1) {
		if (opts_common(&o.c, ch, optarg, usage))
			continue;
		switch (ch) {
		case OPT_BINARY:
			o.p.binary = 1;
			break;
		case OPT_CLASSES:
			o.p.classes = (size_t)cli_ll("--classes", optarg, 1,
			    (long long)LABEL_MAX_CLASSES);
			break;
		case OPT_CLIP:
		case OPT_CLIP_ROWS:
			/* --clip as in covest and gmm-fit (privada(7),
			 * "Conventions"): same range, same message;
			 * --clip-rows is its old spelling. */
			o.clip = cli_double(ch == OPT_CLIP ? "--clip" :
			    "--clip-rows", optarg, FEAT_CLIP_MIN, FEAT_CLIP_MAX);
			o.clip_arg = optarg;
			break;
		case OPT_COLUMNS:
			if (csvlay_check_columns(optarg, msg) != 0)
				cli_usage_error("%s", msg);
			o.p.columns = optarg;
			break;
		case OPT_CROP_BBOX:
			if (feat_parse_crop(optarg, &o.crop_thr) != 0)
				cli_usage_error("invalid --crop-bbox '%s': "
				    "expected a pixel threshold in [0, 254]",
				    optarg);
			o.p.crop = 1;
			break;
		case OPT_DROP_UNKNOWN:
			o.p.drop_unknown = 1;
			break;
		case OPT_DTYPE:
			o.dtype = cli_choice("--dtype", optarg, dtypes) == 0 ?
			    TS_F32 : TS_F64;
			break;
		case OPT_FORMAT:
			o.p.format = FEAT_CSV + cli_choice("--format", optarg,
			    formats);
			break;
		case OPT_GROUP_NORM:
			o.groups = (size_t)cli_ll("--group-norm", optarg, 1,
			    1 << 20);
			break;
		case OPT_IMAGE:
			if (feat_parse_resize(optarg, MAX_SIDE, &o.ih, &o.iw))
				cli_usage_error("invalid --image '%s': "
				    "expected HxW with sides in [1, %d]", optarg,
				    MAX_SIDE);
			break;
		case OPT_LAYOUT:
			o.hwc = 1 + cli_choice("--layout", optarg, layouts);
			break;
		case OPT_SCATTER:
			parse_scatter(&o, optarg);
			break;
		case OPT_THREADS:
			o.threads = (int)cli_ll("--threads", optarg, 1,
			    SCATTER_MAX_THREADS);
			break;
		case OPT_HASH_DIM:
			o.hash_dim = (uint64_t)cli_ll("--hash-dim", optarg, 1,
			    (long long)MAX_FEATURES);
			o.p.hash_set = 1;
			break;
		case OPT_HEADER:
			o.header = cli_choice("--header", optarg, headers);
			o.p.header_set = 1;
			break;
		case OPT_LABEL:
			if (*optarg == '\0')
				cli_usage_error("invalid --label '': empty");
			o.p.label = optarg;
			break;
		case OPT_LABEL_MAP:
			o.p.label_map = optarg;
			break;
		case OPT_LABELS:
			o.p.labels = optarg;
			break;
		case OPT_MISSING:
			o.missing = cli_choice("--missing", optarg, missings);
			break;
		case OPT_NO_LABEL:
			o.p.no_label = 1;
			break;
		case OPT_NORMALIZE:
			o.normalize = SCALE_NORM_L1 + cli_choice("--normalize",
			    optarg, norms);
			break;
		case OPT_RESIZE:
			if (feat_parse_resize(optarg, MAX_SIDE, &o.rh, &o.rw))
				cli_usage_error("invalid --resize '%s': "
				    "expected HxW with sides in [1, %d]", optarg,
				    MAX_SIDE);
			o.p.resize = 1;
			break;
		case OPT_SCALE:
			parse_scale(&o, optarg);
			break;
		case OPT_SCALE_FROM:
			o.p.scale_from = optarg;
			break;
		case OPT_VOCAB:
			o.p.vocab = optarg;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1)
		usage(EX_USAGE);
	path = argc == 1 ? argv[0] : NULL;
	if (o.p.format == FEAT_NONE)
		o.p.format = feat_format_from_path(path);

	if ((bad = feat_check_params(&o.p, msg)) != NULL)
		cli_usage_error("%s", bad);
	if (o.sj && o.p.format == FEAT_TEXT)
		cli_usage_error("--scatter applies to images: idx input, or "
		    "csv with --image HxW");
	if (o.sj && o.p.format == FEAT_CSV && o.ih == 0)
		cli_usage_error("--scatter on csv input needs --image HxW "
		    "(each row an image of H x W columns)");
	if (o.ih && o.p.format != FEAT_CSV)
		cli_usage_error("--image applies to csv input only");
	if (!o.sj && (o.ih || o.groups || o.threads || o.hwc))
		cli_usage_error("%s applies to --scatter only", o.ih ?
		    "--image" : o.groups ? "--group-norm" : o.threads ?
		    "--threads" : "--layout");
	if (o.hwc)
		o.hwc--;
	if (o.sj && o.threads == 0) {
		long np = sysconf(_SC_NPROCESSORS_ONLN);
		o.threads = np < 1 ? 1 : np > SCATTER_MAX_THREADS ?
		    SCATTER_MAX_THREADS : (int)np;
	}

	if (o.c.dataset)
		snprintf(name, sizeof name, "%s", o.c.dataset);
	else
		feat_dataset_from_path(path, name, sizeof name);

	/* Open everything before computing. */
	in = cli_infile_open(path, INFILE_GZIP);
	inputs[0] = in;
	{
		const char *sp = o.p.labels ? o.p.labels : o.p.scale_from ?
		    o.p.scale_from : o.p.vocab;
		if (sp) {
			int stdin_in = path == NULL || strcmp(path, "-") == 0;
			if (strcmp(sp, "-") == 0 && stdin_in)
				cli_usage_error("the input and %s cannot both be "
				    "stdin", o.p.labels ? "--labels" : o.p.scale_from ?
				    "--scale-from" : "--vocab");
			if (o.p.scale_from && strcmp(sp, "-") == 0)
				cli_usage_error("--scale-from needs a file, not "
				    "stdin");
			side = cli_infile_open(sp, INFILE_GZIP);
			inputs[ninputs++] = side;
			if (o.p.scale_from && feat_same_file(infile_source(in),
			    infile_source(side)))
				cli_usage_error("--scale-from '%s' is the input "
				    "itself: bounds learnt from private data are "
				    "not private (use --scale LO:HI or a public "
				    "file)", sp);
		}
	}
	labcol_init(&ou.lab, o.p.classes, o.p.drop_unknown);
	if (o.p.label_map) {
		lmap = cli_infile_open(o.p.label_map, INFILE_GZIP);
		inputs[ninputs++] = lmap;
		if (feat_same_file(infile_source(in), infile_source(lmap)))
			cli_usage_error("--label-map '%s' is the input itself: a "
			    "label set learnt from private data is not public",
			    o.p.label_map);
		ou.map_label = infile_label(lmap);
		if ((rc = feat_read_label_map(&ou.lab, infile_fp(lmap),
		    infile_label(lmap), msg)) != 0)
			feat_die(lmap, rc, msg);
	}
	ofp = cli_out_open(o.c.output, o.c.force);
	ou.o = &o;
	ou.w = cli_writer(ofp, o.c.level);
	ou.sc.binary = o.p.binary;
	ou.sc.normalize = o.normalize;
	ou.sc.clip = o.clip_arg ? o.clip : 0;
	ou.sc.dtype = o.dtype;
	if (o.p.scale) {
		ou.sc.on = 1;
		ou.sc.lo = o.scale_lo;
		ou.sc.hi = o.scale_hi;
	} else if (o.p.format == FEAT_IDX && !o.p.binary) {
		/* Pixels are scaled to [0,1] unless --scale says otherwise. */
		ou.sc.on = 1;
		ou.sc.lo = 0;
		ou.sc.hi = 255;
	}
	if (o.sj) {
		/* --scatter: the bounds apply to pixels, before it. */
		ou.isc.on = ou.sc.on;
		ou.isc.lo = ou.sc.lo;
		ou.isc.hi = ou.sc.hi;
		ou.sc.on = 0;
	}

	/* The taint comes first, so a reader sees it before any row. */
	if (ledger_mark_raw(&sm, name, LEDGER_ROW_LOCAL, err, sizeof err) != 0)
		cli_die(EX_SOFTWARE, "%s", err);
	cli_meta_set(&sm, "data.name", name);
	cli_prov(&sm);
	if ((rc = ts_write_meta(ou.w, &sm)) != 0)
		cli_wdie(ou.w, rc);
	ts_meta_free(&sm);

	if (o.p.format == FEAT_CSV)
		run_csv(&ou, &o, in, o.p.scale_from ? side : NULL, inputs,
		    ninputs);
	else if (o.p.format == FEAT_IDX)
		run_idx(&ou, &o, in, side, inputs, ninputs);
	else
		run_text(&ou, &o, in, side, inputs, ninputs);
	ts_writer_close(ou.w);
	cli_infile_close(in);
	cli_infile_close(side);
	cli_infile_close(lmap);
	cli_out_commit();
	return 0;
}
