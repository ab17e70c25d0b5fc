/* tns: verify, inspect, join, select, split and convert tensor streams.
 * main.c: the options and the command table. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opts.h"
#include "tensor.h"
#include "tns.h"

#define MAX_PARTS 1000000

/* Option bits: which subcommand accepts which option. */
enum {
	O_FORCE = 1 << 0, O_INPUT = 1 << 1, O_OUTPUT = 1 << 2,
	O_SEED = 1 << 3, O_LEVEL = 1 << 4, O_FORMAT = 1 << 5,
	O_STATS = 1 << 6, O_RENAME = 1 << 7, O_PARTS = 1 << 8,
	O_FRACTIONS = 1 << 9, O_PREFIX = 1 << 10, O_TENSORS = 1 << 11,
	O_TENSOR = 1 << 12, O_HEADER = 1 << 13, O_NAME = 1 << 14,
	O_DTYPE = 1 << 15, O_UNSAFE = 1 << 16, O_EMPTY = 1 << 17
};

/* getopt values of the long-only options. */
enum {
	L_DTYPE = OPTS_FIRST_TOOL, L_EMPTY, L_FORMAT, L_FRACTIONS, L_HEADER, L_NAME,
	L_PARTS, L_PREFIX, L_RENAME, L_STATS, L_TENSOR, L_TENSORS, L_UNSAFE
};

static const struct option longopts[] = {
	{ "allow-empty", no_argument, NULL, L_EMPTY },
	{ "dtype", required_argument, NULL, L_DTYPE },
	{ "force", no_argument, NULL, 'f' },
	{ "format", required_argument, NULL, L_FORMAT },
	{ "fractions", required_argument, NULL, L_FRACTIONS },
	{ "header", no_argument, NULL, L_HEADER },
	{ "help", no_argument, NULL, 'h' },
	{ "input", required_argument, NULL, 'i' },
	{ "level", required_argument, NULL, OPTS_LEVEL },
	{ "name", required_argument, NULL, L_NAME },
	{ "output", required_argument, NULL, 'o' },
	{ "parts", required_argument, NULL, L_PARTS },
	{ "prefix", required_argument, NULL, L_PREFIX },
	{ "quiet", no_argument, NULL, 'q' },
	{ "rename", required_argument, NULL, L_RENAME },
	{ "seed", required_argument, NULL, 'S' },
	{ "stats", no_argument, NULL, L_STATS },
	{ "tensor", required_argument, NULL, L_TENSOR },
	{ "tensors", required_argument, NULL, L_TENSORS },
	{ "unsafe-ledger", no_argument, NULL, L_UNSAFE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 }
};

/* Option value, bit and spelling, for "does not apply" messages. */
static const struct {
	int ch;
	unsigned bit;
	const char *name;
} optbits[] = {
	{ 'f', O_FORCE, "--force" }, { 'i', O_INPUT, "--input" },
	{ 'o', O_OUTPUT, "--output" }, { 'S', O_SEED, "--seed" },
	{ OPTS_LEVEL, O_LEVEL, "--level" }, { L_FORMAT, O_FORMAT, "--format" },
	{ L_STATS, O_STATS, "--stats" }, { L_RENAME, O_RENAME, "--rename" },
	{ L_PARTS, O_PARTS, "--parts" },
	{ L_FRACTIONS, O_FRACTIONS, "--fractions" },
	{ L_PREFIX, O_PREFIX, "--prefix" }, { L_TENSORS, O_TENSORS, "--tensors" },
	{ L_TENSOR, O_TENSOR, "--tensor" }, { L_HEADER, O_HEADER, "--header" },
	{ L_NAME, O_NAME, "--name" }, { L_DTYPE, O_DTYPE, "--dtype" },
	{ L_UNSAFE, O_UNSAFE, "--unsafe-ledger" },
	{ L_EMPTY, O_EMPTY, "--allow-empty" },
};

struct cmd {
	const char *name;
	int (*run)(struct opts *, int, char **);
	unsigned allowed;
};

static void usage(int) __attribute__((noreturn));

static void
usage(int status)
{
	FILE *fp = status ? stderr : stdout;

	fputs(
"usage: tns verify [-qv] [file ...]\n"
"       tns info [-qv] [--format text|json] [--stats] [file ...]\n"
"       tns cat [-fqv] [--level n] [-o file] [file ...]\n"
"       tns pick [-fqv] [-i file] [--level n] [-o file] [--rename old=new]\n"
"           name ...\n"
"       tns split [-fqv] [--allow-empty] {--fractions list | --parts n}\n"
"           [--level n] [--prefix prefix] [-S seed] [--tensors list] [file]\n"
"       tns to-csv [-qv] [--header] [-o file] [--tensor name] [file]\n"
"       tns from-csv [-fqv] [--dtype type] [--header] [--level n]\n"
"           [--name name] [-o file] [file]\n"
"       tns to-npy [-fqv] [-o file] [--tensor name] [file]\n"
"       tns to-npz [-fqv] [-o file] [file]\n"
"       tns from-npy [-fqv] [--level n] [--name name] [-o file] [file]\n"
"       tns meta set [-fqv] [-i file] [--level n] [-o file] [--unsafe-ledger]\n"
"           key=value ...\n", fp);
	if (status == 0)
		fputs(
"\n"
"commands:\n"
"  verify      check every byte of each stream; silent unless -v\n"
"  info        describe streams: tensors, metadata, privacy ledger\n"
"  cat         concatenate the tensors of the streams into one stream\n"
"  pick        keep the tensors whose names match the glob patterns\n"
"  split       partition the rows into disjoint, shuffled parts\n"
"  to-csv      write a 1-D or 2-D tensor as CSV\n"
"  from-csv    read numeric CSV into one 2-D tensor\n"
"  to-npy      write a tensor as a NumPy .npy file\n"
"  to-npz      write every tensor and the metadata as a NumPy .npz file\n"
"  from-npy    read a NumPy .npy file into one tensor\n"
"  meta set    set stream metadata (for tests)\n"
"\n"
"options:\n"
"  -f, --force            write binary output to a terminal\n"
"  -h, --help             print this help and exit\n"
"  -i, --input file       the input stream of pick and meta (default stdin)\n"
"  -o, --output file      write to file (via a temporary file and rename)\n"
"  -q, --quiet            no warnings or progress\n"
"  -S, --seed seed        split with this 64-bit seed (default: getrandom)\n"
"  -V, --version          print the version and exit\n"
"  -v, --verbose          say more (verify: 'FILE: ok')\n"
"  --allow-empty          split: write a part that gets no rows\n"
"  --dtype type           from-csv element type: f64 (default), f32, i32,\n"
"                         i64, u8\n"
"  --format text|json     info output format (default text)\n"
"  --fractions list       split sizes as fractions summing to 1, e.g. 0.8,0.2\n"
"  --header               CSV has (from-csv) or gets (to-csv) a header line\n"
"  --level n              zstd level of output streams (default 1)\n"
"  --name name            tensor name for from-csv and from-npy (default x)\n"
"  --parts n              split into n parts of equal size (+-1 row)\n"
"  --prefix prefix        split output names: prefix<i>.tns (default part-)\n"
"  --rename old=new       pick: rename a picked tensor (repeatable)\n"
"  --stats                info: min, max and mean of each tensor\n"
"  --tensor name          to-csv, to-npy: the tensor (default the first)\n"
"  --tensors list         split: the tensors to split (default all)\n"
"  --unsafe-ledger        meta set: allow dp.* keys (tests only)\n", fp);
	exit(status);
}

/* ---- main ---- */

static const struct cmd cmds[] = {
	{ "verify", cmd_verify, 0 },
	{ "info", cmd_info, O_FORMAT | O_STATS },
	{ "cat", cmd_cat, O_FORCE | O_OUTPUT | O_LEVEL },
	{ "pick", cmd_pick, O_FORCE | O_INPUT | O_OUTPUT | O_LEVEL | O_RENAME,
	    },
	{ "split", cmd_split, O_FORCE | O_LEVEL | O_SEED | O_PARTS |
	    O_FRACTIONS | O_PREFIX | O_TENSORS | O_EMPTY },
	{ "to-csv", cmd_to_csv, O_OUTPUT | O_TENSOR | O_HEADER },
	{ "from-csv", cmd_from_csv, O_FORCE | O_OUTPUT | O_LEVEL | O_NAME |
	    O_DTYPE | O_HEADER },
	{ "to-npy", cmd_to_npy, O_FORCE | O_OUTPUT | O_TENSOR },
	{ "to-npz", cmd_to_npz, O_FORCE | O_OUTPUT },
	{ "from-npy", cmd_from_npy, O_FORCE | O_OUTPUT | O_LEVEL | O_NAME,
	    },
	{ "meta", cmd_meta, O_FORCE | O_INPUT | O_OUTPUT | O_LEVEL | O_UNSAFE,
	    },
};

static void
parse_fractions(struct opts *o, const char *arg)
{
	char *s = cli_strdup(arg), *p = s, *tok;
	double sum = 0;

	o->nfractions = 0;	/* the last --fractions counts */

	while ((tok = strsep(&p, ",")) != NULL) {
		char *end;
		double f;

		errno = 0;
		f = strtod(tok, &end);
		if (end == tok || *end != '\0')
			cli_usage_error("invalid --fractions '%s': '%s' is not "
			    "a number", arg, tok);
		if (errno == ERANGE || !isfinite(f) || !(f > 0 && f <= 1))
			cli_usage_error("invalid --fractions '%s': '%s' is not "
			    "in (0, 1]", arg, tok);
		if (o->nfractions >= MAX_PARTS)
			cli_usage_error("invalid --fractions '%s': more than %d "
			    "parts", arg, MAX_PARTS);
		o->fractions = cli_reallocarray(o->fractions, o->nfractions + 1,
		    sizeof *o->fractions);
		o->fractions[o->nfractions++] = f;
		sum += f;
	}
	if (fabs(sum - 1) > 1e-6)
		cli_usage_error("invalid --fractions '%s': the fractions sum "
		    "to %.17g, not 1", arg, sum);
	free(s);
}

int
main(int argc, char **argv)
{
	static const char *const formats[] = { "text", "json", NULL };
	struct opts o = { .c = OPTS_COMMON_INIT, .prefix = "part-",
	    .dtype = TS_F64 };
	const struct cmd *cmd = NULL;
	char **av;
	int ac, ch, rc;

	cli_init(argv[0], argc, argv);
	if (argc < 2)
		usage(EX_USAGE);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
		usage(0);
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0)
		cli_version();
	for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			cmd = &cmds[i];
	if (cmd == NULL) {
		if (argv[1][0] == '-')
			cli_usage_error("the command comes first: tns COMMAND "
			    "[options] [file ...]");
		cli_usage_error("unknown command '%s'", argv[1]);
	}
	/* getopt permutes its argv: give it a copy, so prov.args keeps the
	 * command line as typed. */
	ac = argc - 1;
	av = cli_reallocarray(NULL, (size_t)argc, sizeof *av);
	av[0] = argv[0];
	for (int i = 2; i < argc; i++)
		av[i - 1] = argv[i];
	av[ac] = NULL;
	while ((ch = getopt_long(ac, av, "fhi:o:qS:vV", longopts, NULL)) != -1) {
		for (size_t i = 0; i < sizeof optbits / sizeof optbits[0]; i++)
			if (optbits[i].ch == ch && !(cmd->allowed & optbits[i].bit))
				cli_usage_error("option %s does not apply to "
				    "'tns %s'", optbits[i].name, cmd->name);
		if (opts_common(&o.c, ch, optarg, usage))
			continue;
		switch (ch) {
		case 'i':
			o.input = optarg;
			break;
		case L_DTYPE:
			if ((o.dtype = ts_dtype_from_name(optarg)) == 0)
				cli_usage_error("invalid --dtype '%s': expected "
				    "f64, f32, i32, i64 or u8", optarg);
			break;
		case L_FORMAT:
			o.json = cli_choice("--format", optarg, formats);
			break;
		case L_FRACTIONS:
			parse_fractions(&o, optarg);
			break;
		case L_HEADER:
			o.header = 1;
			break;
		case L_EMPTY:
			o.allow_empty = 1;
			break;
		case L_NAME:
			o.name = optarg;
			break;
		case L_PARTS:
			o.parts = (uint64_t)cli_ll("--parts", optarg, 1,
			    MAX_PARTS);
			break;
		case L_PREFIX:
			o.prefix = optarg;
			break;
		case L_RENAME:
			o.renames = cli_reallocarray(o.renames, o.nrenames + 1,
			    sizeof *o.renames);
			o.renames[o.nrenames++] = optarg;
			break;
		case L_STATS:
			o.stats = 1;
			break;
		case L_TENSOR:
			o.tensor = optarg;
			break;
		case L_TENSORS:
			o.tensors = optarg;
			break;
		case L_UNSAFE:
			o.unsafe_ledger = 1;
			break;
		default:
			usage(EX_USAGE);
		}
	}
	rc = cmd->run(&o, ac - optind, av + optind);
	free(av);
	free(o.fractions);
	free(o.renames);
	return rc;
}
