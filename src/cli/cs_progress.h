/* What a long `collsim run` shows while it prices, and how Ctrl-C stops it.
 *
 * A progress line on stderr, redrawn in place, when stderr is a terminal
 * and the run has taken more than a second: the size being priced, the
 * share of the sweep done weighted by bytes (each size's expected work is
 * taken as proportional to its bytes), the time elapsed and the time left,
 * extrapolated from the last size priced. Nothing at all when stderr is not
 * a terminal.
 *
 * Ctrl-C: while a cs_progress_t exists, SIGINT (and SIGTERM, SIGHUP) only sets the engines' flag
 * (cs_engine_interrupt); the sweep stops between sizes and engines poll it
 * inside long ones. An engine that does not poll is stopped by a watchdog:
 * a second after Ctrl-C the process prints "collsim: interrupted" and
 * exits 130. That is safe because nothing is written to a file while a
 * cs_progress_t exists: files are written after cs_progress_free. */
#ifndef CS_PROGRESS_H
#define CS_PROGRESS_H

#include <stdio.h>
#include <glib.h>

/* A stopped run's exit status, 128 + the signal that stopped it (130 for
 * Ctrl-C, 143 for SIGTERM, 129 for SIGHUP), and its one line on stderr
 * ("collsim: interrupted\n", "collsim: terminated (SIGTERM)\n", ...). */
int cs_progress_exit_status(void);
const char *cs_progress_stop_message(void);

typedef struct cs_progress cs_progress_t;

/* n items weighing weights[i] bytes each (a size of 0 counts as 1 byte);
 * the line goes to 'stream' if it is a terminal. Catches SIGINT, SIGTERM and SIGHUP (the
 * handler stays after cs_progress_free: a late Ctrl-C cannot cut a file
 * being written). weights NULL: steps of unknown cost (calibrate's fit),
 * the line their label and the time elapsed only. */
cs_progress_t *cs_progress_new(FILE *stream, int n, const guint64 *weights);
/* Item i (its label, e.g. "256 MiB") starts being priced. */
void cs_progress_begin(cs_progress_t *p, int i, const char *label);
/* The item being priced is done: clears the line, so that the caller can
 * print its row on stdout. */
void cs_progress_end(cs_progress_t *p);
/* Calls fn(data) once from the progress thread when the run has taken a
 * second (and at once if it already has), unless cs_progress_free came
 * first. For output held back until a run is known to be long: fn runs
 * concurrently with the caller, which must lock what they share. */
void cs_progress_on_slow(cs_progress_t *p, void (*fn)(gpointer data), gpointer data);
/* Clears the line and stops the watchdog. */
void cs_progress_free(cs_progress_t *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cs_progress_t, cs_progress_free)

#endif
