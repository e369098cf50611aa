/* The progress line and the Ctrl-C watchdog of a long run (cs_progress.h).
 * One thread wakes every 100 ms: it redraws the line (stderr a terminal,
 * more than a second elapsed) and, a second after Ctrl-C, ends a run whose
 * engine did not stop by itself. The main thread only updates the state
 * under the mutex; every write to the terminal happens under it too, so
 * that a row printed on stdout never lands in the middle of the line. */
#include "config.h"
#include "cli/cs_progress.h"
#include "sim/cs_engine.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define TICK_US (100 * 1000)           /* the thread's period */
#define FIRST_DRAW_US (1000 * 1000)    /* a run shorter than this shows nothing */
#define REDRAW_US (250 * 1000)
#define GRACE_US (1000 * 1000)         /* Ctrl-C: time left to the engine to stop */

struct cs_progress {
    GMutex lock;
    GCond wake;
    GCond started;           /* the thread runs its loop (running) */
    gboolean running;
    GThread *thread;
    gboolean stop;
    int fd;                  /* the terminal, or -1: no line */
    int n;
    double *w;               /* each item's weight */
    double total_w, done_w;
    int cur;                 /* item being priced or last priced, -1: none yet */
    gboolean pricing;        /* between begin and end */
    char *label;
    gint64 t0, cur_t0;       /* monotonic us: the run's and the item's start */
    double s_per_w;          /* seconds per weight of the last item done, < 0: none */
    gboolean steps;          /* no weights: steps of unknown cost (no share, no time left) */
    gint64 last_draw;
    int shown;               /* characters of the line now on the terminal */
    gint64 interrupt_seen;   /* when the thread first saw Ctrl-C, 0: not yet */
    void (*on_slow)(gpointer);
    gpointer on_slow_data;
};

/* fork() while the thread holds an allocator's lock leaves the child
 * waiting for it forever: the SimGrid engine's and sweep's children run
 * on without exec. Seen under ASan (its allocator has no fork handler),
 * 1 run in 4 of a short SimGrid run, forked while the thread was still
 * starting. So cs_progress_new returns once the thread runs its loop,
 * where it allocates only under p->lock, and a fork takes that lock
 * first (pthread_atfork): the thread is then waiting, holding nothing. */
static GMutex active_lock;        /* static: needs no init */
static cs_progress_t *active;     /* the progress whose lock a fork takes */

static void atfork_prepare(void)
{
    g_mutex_lock(&active_lock);
    if (active != NULL)
        g_mutex_lock(&active->lock);
}

static void atfork_release(void)
{
    if (active != NULL)
        g_mutex_unlock(&active->lock);
    g_mutex_unlock(&active_lock);
}

static void on_stop_signal(int sig)
{
    cs_engine_interrupt(sig);
}

/* SIGINT (Ctrl-C), SIGTERM (kill, a batch scheduler's time limit: Slurm
 * sends it before SIGKILL) and SIGHUP (the terminal closed) all stop the
 * run the same way: the SimGrid child killed and its files removed,
 * rather than the default action leaving them in $TMPDIR. A signal that
 * the process started with ignored (a background job of a shell script,
 * nohup) is not meant for us, as for any Unix program, and stays so. */
static const int stop_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void catch_stop_signals(void)
{
    for (gsize i = 0; i < G_N_ELEMENTS(stop_signals); i++) {
        struct sigaction sa, old;
        if (sigaction(stop_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;   /* stdio on stdout goes on undisturbed */
        sigaction(stop_signals[i], &sa, NULL);
    }
}

int cs_progress_exit_status(void)
{
    int sig = cs_engine_interrupt_signal();
    return 128 + (sig > 0 ? sig : SIGINT);
}

const char *cs_progress_stop_message(void)
{
    switch (cs_engine_interrupt_signal()) {
    case SIGTERM:
        return "collsim: terminated (SIGTERM)\n";
    case SIGHUP:
        return "collsim: hung up (SIGHUP)\n";
    default:
        return "collsim: interrupted\n";
    }
}

static void write_all(int fd, const char *s, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, s, len);
        if (w <= 0)
            return;   /* a terminal that went away: nothing more to show */
        s += w;
        len -= (size_t)w;
    }
}

/* "0:07", "12:34", "1:02:03" */
static void format_duration(double s, char *buf, size_t len)
{
    long t = s > 0 ? (long)(s + 0.5) : 0;
    if (t >= 3600)
        g_snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        g_snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

/* The line for the current state (under the lock). The time left assumes
 * the seconds per byte of the last size priced, or of the current one once
 * it has taken longer than that predicts. */
static char *progress_line(const cs_progress_t *p, gint64 now)
{
    char elapsed[32], left[32];
    format_duration((now - p->t0) * 1e-6, elapsed, sizeof elapsed);
    if (!p->pricing)
        return g_strdup_printf("collsim: preparing the model, %s elapsed", elapsed);
    if (p->steps)
        return g_strdup_printf("collsim: %s, %s elapsed", p->label, elapsed);
    double cur_w = p->w[p->cur], cur_s = (now - p->cur_t0) * 1e-6;
    double done = p->done_w;
    GString *g = g_string_new(NULL);
    g_string_append_printf(g, "collsim: pricing %s (%d/%d)", p->label, p->cur + 1, p->n);
    if (p->s_per_w >= 0) {
        double est = cur_w * p->s_per_w;
        if (est > 0)
            done += cur_w * MIN(0.99, cur_s / est);
    }
    if (p->n > 1)
        g_string_append_printf(g, ", %.0f%% by bytes", 100 * MIN(1.0, done / p->total_w));
    g_string_append_printf(g, ", %s elapsed", elapsed);
    if (p->s_per_w >= 0) {
        double rate = MAX(p->s_per_w, cur_s / cur_w);
        double rest = MAX(0, cur_w * p->s_per_w - cur_s) + (p->total_w - p->done_w - cur_w) * rate;
        format_duration(rest, left, sizeof left);
        g_string_append_printf(g, ", ~%s left", left);
    }
    return g_string_free(g, FALSE);
}

static int terminal_columns(int fd)
{
    struct winsize ws;
    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1)
        return ws.ws_col;
    return 80;
}

/* Under the lock. */
static void clear_line(cs_progress_t *p)
{
    if (p->fd < 0 || p->shown == 0)
        return;
    GString *g = g_string_new("\r");
    for (int i = 0; i < p->shown; i++)
        g_string_append_c(g, ' ');
    g_string_append_c(g, '\r');
    write_all(p->fd, g->str, g->len);
    g_string_free(g, TRUE);
    p->shown = 0;
}

/* Under the lock. The line is cut to the terminal's width: a line that
 * wraps cannot be redrawn with \r. */
static void draw(cs_progress_t *p, gint64 now)
{
    g_autofree char *line = progress_line(p, now);
    int len = (int)MIN(strlen(line), (size_t)terminal_columns(p->fd) - 1);
    GString *g = g_string_new("\r");
    g_string_append_len(g, line, len);
    for (int i = len; i < p->shown; i++)
        g_string_append_c(g, ' ');
    write_all(p->fd, g->str, g->len);
    g_string_free(g, TRUE);
    p->shown = MAX(p->shown, len);
    p->last_draw = now;
}

static gpointer progress_thread(gpointer data)
{
    cs_progress_t *p = data;
    g_mutex_lock(&p->lock);
    p->running = TRUE;
    g_cond_signal(&p->started);
    while (!p->stop) {
        g_cond_wait_until(&p->wake, &p->lock, g_get_monotonic_time() + TICK_US);
        if (p->stop)
            break;
        gint64 now = g_get_monotonic_time();
        if (cs_engine_interrupted()) {
            if (p->interrupt_seen == 0)
                p->interrupt_seen = now;
            else if (now - p->interrupt_seen >= GRACE_US) {
                /* The engine did not stop: nothing is being written to a
                 * file (cs_progress.h), so ending here leaves none. */
                clear_line(p);
                const char *msg = cs_progress_stop_message();
                write_all(STDERR_FILENO, msg, strlen(msg));
                _exit(cs_progress_exit_status());
            }
            continue;
        }
        if (p->on_slow != NULL && now - p->t0 >= FIRST_DRAW_US) {
            clear_line(p);
            p->on_slow(p->on_slow_data);
            p->on_slow = NULL;
        }
        /* before the first size (the engine's setup) and during each */
        gboolean busy = p->pricing || p->cur < 0;
        if (p->fd >= 0 && busy && now - p->t0 >= FIRST_DRAW_US && now - p->last_draw >= REDRAW_US)
            draw(p, now);
    }
    g_mutex_unlock(&p->lock);
    return NULL;
}

cs_progress_t *cs_progress_new(FILE *stream, int n, const guint64 *weights)
{
    cs_progress_t *p = g_new0(cs_progress_t, 1);
    g_mutex_init(&p->lock);
    g_cond_init(&p->wake);
    g_cond_init(&p->started);
    p->fd = stream != NULL && isatty(fileno(stream)) ? fileno(stream) : -1;
    p->n = MAX(0, n);
    p->steps = weights == NULL;
    p->w = g_new0(double, MAX(1, p->n));
    for (int i = 0; i < p->n; i++) {
        p->w[i] = weights == NULL ? 1 : weights[i] > 0 ? (double)weights[i] : 1;
        p->total_w += p->w[i];
    }
    p->cur = -1;
    p->s_per_w = -1;
    p->t0 = g_get_monotonic_time();
    catch_stop_signals();
    static gsize atfork_once = 0;
    if (g_once_init_enter(&atfork_once)) {
        pthread_atfork(atfork_prepare, atfork_release, atfork_release);
        g_once_init_leave(&atfork_once, 1);
    }
    p->thread = g_thread_new("collsim-progress", progress_thread, p);
    g_mutex_lock(&p->lock);
    while (!p->running)
        g_cond_wait(&p->started, &p->lock);
    g_mutex_unlock(&p->lock);
    g_mutex_lock(&active_lock);
    if (active == NULL)
        active = p;
    g_mutex_unlock(&active_lock);
    return p;
}

void cs_progress_on_slow(cs_progress_t *p, void (*fn)(gpointer data), gpointer data)
{
    g_mutex_lock(&p->lock);
    p->on_slow = fn;
    p->on_slow_data = data;
    g_cond_signal(&p->wake);
    g_mutex_unlock(&p->lock);
}

void cs_progress_begin(cs_progress_t *p, int i, const char *label)
{
    g_return_if_fail(i >= 0 && i < p->n);
    g_mutex_lock(&p->lock);
    p->cur = i;
    p->pricing = TRUE;
    g_free(p->label);
    p->label = g_strdup(label);
    p->cur_t0 = g_get_monotonic_time();
    g_mutex_unlock(&p->lock);
}

void cs_progress_end(cs_progress_t *p)
{
    g_mutex_lock(&p->lock);
    if (p->pricing) {
        double s = (g_get_monotonic_time() - p->cur_t0) * 1e-6;
        p->s_per_w = s / p->w[p->cur];
        p->done_w += p->w[p->cur];
        p->pricing = FALSE;
    }
    clear_line(p);
    g_mutex_unlock(&p->lock);
}

void cs_progress_free(cs_progress_t *p)
{
    if (p == NULL)
        return;
    g_mutex_lock(&active_lock);
    if (active == p)
        active = NULL;
    g_mutex_unlock(&active_lock);
    g_mutex_lock(&p->lock);
    p->stop = TRUE;
    clear_line(p);
    g_cond_signal(&p->wake);
    g_mutex_unlock(&p->lock);
    g_thread_join(p->thread);
    g_mutex_clear(&p->lock);
    g_cond_clear(&p->wake);
    g_cond_clear(&p->started);
    g_free(p->w);
    g_free(p->label);
    g_free(p);
}
