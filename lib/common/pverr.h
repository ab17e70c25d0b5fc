/*
 * pverr.h: the library's one list of error codes.  Every function of lib/
 * that can fail returns 0 or one of these negative values, whatever its
 * room; a module's own names (TS_E_IO, NOISE_E_NOMEM, ...) are aliases of
 * them, so that a code keeps its meaning when it crosses a module.  The
 * values are pinned: never renumber, only append.  Tools map a code to an
 * exit status in one place (cli_pv_exit in tools/common/cli.h).
 */
#ifndef PRIVADA_PVERR_H
#define PRIVADA_PVERR_H
#include <stddef.h>

enum pv_error {
	PV_OK = 0,
	PV_E_RANGE = -1,	/* an argument outside its documented range */
	PV_E_NOMEM = -2,	/* out of memory, or an allocation size overflows */
	PV_E_IO = -3,		/* read or write error (errno says why) */
	PV_E_ZSTD = -4,		/* corrupt compressed data */
	PV_E_TRUNCATED = -5,	/* the input ends early */
	PV_E_FORMAT = -6,	/* malformed record, field or metadata */
	PV_E_VERSION = -7,	/* unsupported major version */
	PV_E_LIMIT = -8,	/* a size exceeds a reader limit */
	PV_E_OVERFLOW = -9,	/* a result or size would not fit */
	PV_E_CHECKSUM = -10,	/* checksum mismatch or missing */
	PV_E_USAGE = -11,	/* an API used out of order (a bug) */
	PV_E_ENTROPY = -12,	/* no secure randomness */
	PV_E_NOISE = -13,	/* a noise sampler failed: nothing released */
	PV_E_NOTPD = -14,	/* a matrix is not positive definite */
	PV_E_NUMERIC = -15,	/* a computation did not converge or is not
				 * finite */
	PV_E_NOROOT = -16,	/* an inverse query has no solution in range */
	PV_E_SIZE = -17,	/* a grid would need too many points */
	PV_E_PRIVATE = -18,	/* a DP release would use a value learnt from
				 * private rows as public */
	PV_E_OPTION = -19,	/* the caller's options are missing or in
				 * conflict (a usage error of the tool) */
	PV_E_BUDGET = -20,	/* a budget store refused a release: it
				 * would exceed the dataset's budget */
	PV_E_NOBUDGET = -21,	/* a budget store has no budget for the
				 * dataset */
	PV_E_STORE = -22	/* a budget store failed (database error,
				 * corrupt or read-only file) */
};

#define PV_E_MIN PV_E_STORE	/* the most negative code */

/* A short message for code (static storage; "unknown error" when code is
 * not in the list). */
const char *pv_strerror(int code);

/* Write the printf-style message into err (when err is not NULL and
 * errlen > 0) and return code: the one way a library function fills its
 * err/errlen pair. */
__attribute__((format(printf, 4, 5)))
int pv_fail(int code, char *err, size_t errlen, const char *fmt, ...);

#endif
