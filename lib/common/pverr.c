/* pverr.c: messages of the library's error codes (pverr.h). */
#include <stdarg.h>
#include <stdio.h>

#include "pverr.h"

const char *
pv_strerror(int code)
{
	static const char *const msg[] = {
		"success",
		"argument out of range",
		"out of memory",
		"I/O error",
		"corrupt zstd data",
		"truncated input",
		"malformed input",
		"unsupported version",
		"size limit exceeded",
		"result does not fit",
		"checksum error",
		"invalid use of the API",
		"no secure randomness",
		"the noise sampler failed",
		"matrix not positive definite",
		"numerical failure",
		"no solution in the search range",
		"grid too fine: too many points",
		"a value learnt from private rows used as public",
		"options missing or in conflict",
		"the privacy budget would be exceeded",
		"no privacy budget for the dataset",
		"budget store error",
	};

	if (code > 0 || code < PV_E_MIN)
		return "unknown error";
	return msg[-code];
}

int
pv_fail(int code, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}
