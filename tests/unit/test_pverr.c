/* test_pverr.c: the library's one list of error codes (lib/common/pverr.h):
 * pinned values, a message for each, and every module's names aliasing
 * the list, so that a code keeps its meaning across modules. */
#include <string.h>

#include "gmm.h"
#include "jgauss.h"
#include "labels.h"
#include "nn.h"
#include "noise.h"
#include "pld.h"
#include "pverr.h"
#include "rdp.h"
#include "rng.h"
#include "subspace.h"
#include "tstream.h"
#include "uda.h"
#include "tap.h"

int
main(void)
{
	/* The pinned values (never renumbered). */
	ok((int)PV_E_RANGE == -1 && (int)PV_E_NOMEM == -2 && (int)PV_E_IO == -3 &&
	    (int)PV_E_FORMAT == -6 && (int)PV_E_OPTION == -19 && (int)PV_E_BUDGET == -20 &&
	    (int)PV_E_NOBUDGET == -21 && (int)PV_E_STORE == -22 &&
	    (int)PV_E_MIN == -22,
	    "the codes keep their pinned values");
	/* A distinct message for each code, none "unknown". */
	for (int c = 0; c >= PV_E_MIN; c--) {
		const char *m = pv_strerror(c);
		int distinct = 1;
		for (int d = 0; d > c; d--)
			if (strcmp(pv_strerror(d), m) == 0)
				distinct = 0;
		ok(m != NULL && strcmp(m, "unknown error") != 0 && distinct,
		    "code %d has its own message: %s", c, m);
	}
	ok(strcmp(pv_strerror(1), "unknown error") == 0 &&
	    strcmp(pv_strerror(PV_E_MIN - 1), "unknown error") == 0,
	    "codes outside the list are unknown");
	/* The modules' names are the list's codes. */
	ok((int)TS_E_IO == (int)PV_E_IO && (int)TS_E_NOMEM == (int)PV_E_NOMEM &&
	    (int)TS_E_FORMAT == (int)PV_E_FORMAT && (int)TS_E_USAGE == (int)PV_E_USAGE,
	    "tstream's codes");
	ok((int)NOISE_E_NOMEM == (int)PV_E_NOMEM && (int)NN_E_NOMEM == (int)PV_E_NOMEM &&
	    (int)GMM_E_NOMEM == (int)PV_E_NOMEM && (int)RDP_E_NOMEM == (int)PV_E_NOMEM &&
	    (int)RNG_E_NOMEM == (int)PV_E_NOMEM && (int)PLD_E_NOMEM == (int)PV_E_NOMEM &&
	    (int)SUBSPACE_E_NOMEM == (int)PV_E_NOMEM,
	    "out of memory is one code in every module");
	ok((int)NOISE_E_RANGE == (int)PV_E_RANGE && (int)RDP_E_PARAM == (int)PV_E_RANGE &&
	    (int)PLD_E_PARAM == (int)PV_E_RANGE && (int)JGAUSS_E_RANGE == (int)PV_E_RANGE &&
	    (int)UDA_E_RANGE == (int)PV_E_RANGE && (int)NN_E_RANGE == (int)PV_E_RANGE,
	    "an argument out of range is one code in every module");
	ok((int)RDP_E_NOROOT == (int)PV_E_NOROOT && (int)JGAUSS_E_NOROOT == (int)PV_E_NOROOT &&
	    (int)GMM_E_NUMERIC == (int)PV_E_NUMERIC && (int)RDP_E_NUMERIC == (int)PV_E_NUMERIC,
	    "no root and numerical failure");
	ok((int)NN_E_NOISE != (int)NOISE_E_NOMEM && (int)RNG_E_ENTROPY != (int)RDP_E_NOROOT &&
	    (int)TS_E_IO != (int)NOISE_E_OVERFLOW && (int)GMM_E_NOTPD != (int)RDP_E_NUMERIC,
	    "different failures of different modules no longer clash");
	ok((int)LABEL_E_BAD == (int)PV_E_FORMAT && (int)LABEL_E_PRIVATE == (int)PV_E_PRIVATE &&
	    (int)LABEL_E_USAGE == (int)PV_E_OPTION, "labels' codes");
	return tap_done();
}
