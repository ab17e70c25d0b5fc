/* sidein.c: side inputs declared public (see sidein.h). */
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "sidein.h"

FILE *
sidein_open(FILE *in, const char *opt, const char *path, const char **label)
{
	struct stat a, b;
	FILE *side;

	if (strcmp(path, "-") == 0)
		cli_usage_error("%s needs a file, not stdin", opt);
	side = cli_open_in(path, label);
	if (fstat(fileno(in), &a) == 0 && fstat(fileno(side), &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino && S_ISREG(a.st_mode))
		cli_usage_error("%s '%s' is the input itself: the private rows "
		    "cannot be declared public", opt, path);
	return side;
}
