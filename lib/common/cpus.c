/* cpus.c: the CPUs this process may run on (see cpus.h). */
#include <sched.h>
#include <unistd.h>

#include "cpus.h"

int
pv_cpus(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof set, &set) == 0 &&
	    (n = CPU_COUNT(&set)) >= 1)
		return (int)n;
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n >= 1 && n < 1 << 20 ? (int)n : 1;
}
