/* `collsim real`: measures a scenario with real NCCL, timed and checked as
 * nccl-tests does, and prints it through the writers of `collsim run`
 * (producer "measured:collsim-real"). The command line is cmd_real.c's. */
#ifndef CS_REAL_H
#define CS_REAL_H

#include <glib.h>
#include "io/cs_scenario.h"

typedef struct {
    cs_scenario_t *s;         /* the effective scenario ([nccl] applied to the ranks) */
    int gpus;                 /* ranks our launcher starts (0 = every visible GPU) */
    double timeout_s;         /* per collective, before size scaling */
    const char *bootstrap;    /* --bootstrap HOST:PORT, or NULL */
    guint64 check_max;        /* most elements checked per rank and size (0 = all) */
    char **argv;              /* how to start this command again, for the launcher */
    int test_fail_rank;       /* test hook (--_test-bootstrap): -2 off, -1 none fails */
} cs_real_opts_t;

/* Whether this collsim was built with CUDA and NCCL. */
gboolean cs_real_available(void);
/* Runs as a launcher or as one rank (by the environment, see cs_real_boot.h).
 * Returns the exit status: 0 success, 1 the run failed (a message on
 * stderr), 2 bad input (*err set). */
int cs_real_main(const cs_real_opts_t *o, GError **err);

#endif
