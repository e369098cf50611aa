/* The collsim subcommands. Each parses its own options (one GOptionContext
 * per command) and returns the process exit status: 0 success, 1 a run
 * that failed (e.g. a real collective), 2 bad input (one line on stderr). */
#ifndef CS_COMMANDS_H
#define CS_COMMANDS_H

#include <glib.h>
#include "io/cs_run_args.h"

int cs_cmd_run(int argc, char **argv);       /* cmd_run.c: predict a scenario */
int cs_cmd_topo(int argc, char **argv);      /* cmd_topo.c: topo check|show|dot */
int cs_cmd_validate(int argc, char **argv);  /* cmd_validate.c: compare with an nccl-tests log */
int cs_cmd_compare(int argc, char **argv);   /* cmd_compare.c: designs side by side */
int cs_cmd_sweep(int argc, char **argv);     /* cmd_sweep.c: a grid over scenario keys */
int cs_cmd_step(int argc, char **argv);      /* cmd_step.c: one step of a parallel job */

/* Prints err->message (or "collsim: <fallback>") on one line to stderr and
 * returns 2. */
int cs_cli_fail(GError *err);
/* How a command that predicts ends: prints err for a failure (exit 2, 3,
 * or 1 with an error: a simulated collective that fails) or "collsim:
 * interrupted" (Ctrl-C; SIGTERM and SIGHUP their own line), and returns 'status'. */
int cs_cli_report(int status, GError *err);
/* The body of a command that reads a scenario (run, step): its flags,
 * then 'body' on a fresh scenario with -v as 'verbose', then the report
 * (cs_cli_report). g_set_prgname is the caller's. */
typedef int (*cs_cli_body_t)(const cs_run_args_t *a, gboolean verbose, cs_scenario_t *s, GError **err);
int cs_cli_scenario_command(const cs_run_args_cmd_t *cmd, const char *verbose_doc, cs_cli_body_t body, int argc,
                            char **argv);

#endif
