/*
 * cpus.h: how many CPUs this process may run on.
 *
 * Nothing here prints, exits or reads the environment.
 */
#ifndef PRIVADA_CPUS_H
#define PRIVADA_CPUS_H

/* The CPUs in this thread's affinity mask (sched_getaffinity(2): what
 * taskset(1), cgroups' cpusets or Slurm allow), else the online CPUs,
 * at least 1.  A helper thread pays only when this is above 1: on one
 * CPU it takes turns with the caller and adds context switches. */
int pv_cpus(void);

#endif
