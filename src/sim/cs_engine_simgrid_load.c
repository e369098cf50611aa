/* The registry's SimGrid engine: loads the engine itself on first use.
 *
 * Debian's SimGrid links ns-3 and Boost, whose libraries cost a process
 * about 90 ms of CPU to load and initialise (300 ms under ASan) before
 * main: collsim would pay it on every run, though only --model simgrid
 * needs it. So the engine (cs_engine_simgrid.c, linked against SimGrid)
 * is a module, collsim-simgrid.so, that this entry opens the first time a
 * job asks for the engine; it takes collsim's own functions from the
 * program (linked whole and -rdynamic: mk/simgrid.am). A test or a
 * benchmark that links the engine itself uses it directly. */
#include "config.h"

#include <dlfcn.h>
#include <string.h>

#include "sim/cs_engine_simgrid-int.h"
#include "util/cs_error.h"

/* Resolved where the program links cs_engine_simgrid.c, NULL otherwise
 * (a weak reference pulls nothing from an archive). */
extern const cs_engine_ops_t cs_engine_simgrid_impl __attribute__((weak));

#define MODULE "collsim-simgrid.so"

static GMutex load_lock;
static const cs_engine_ops_t *loaded;   /* under load_lock; never unloaded */

/* The module beside the running program (a build tree: the tests, make
 * distcheck), then where make install puts it. */
static const cs_engine_ops_t *load(GError **err)
{
    if (&cs_engine_simgrid_impl != NULL)
        return &cs_engine_simgrid_impl;
    g_mutex_lock(&load_lock);
    const cs_engine_ops_t *ops = loaded;
    g_autofree char *exe = ops == NULL ? g_file_read_link("/proc/self/exe", NULL) : NULL;
    g_autofree char *dir = exe != NULL ? g_path_get_dirname(exe) : NULL;
    g_autofree char *beside = dir != NULL ? g_build_filename(dir, MODULE, NULL) : NULL;
    const char *const paths[] = { beside, CS_PKGLIBEXECDIR "/" MODULE };
    g_autofree char *why = NULL;
    for (gsize i = 0; ops == NULL && i < G_N_ELEMENTS(paths); i++) {
        if (paths[i] == NULL || !g_file_test(paths[i], G_FILE_TEST_EXISTS))
            continue;
        void *h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (h == NULL) {
            g_free(why);
            why = g_strdup(dlerror());
            continue;
        }
        ops = dlsym(h, "cs_engine_simgrid_impl");
        if (ops == NULL) {
            g_free(why);
            why = g_strdup_printf("%s has no cs_engine_simgrid_impl", paths[i]);
            dlclose(h);
        }
    }
    loaded = ops;
    g_mutex_unlock(&load_lock);
    if (ops == NULL)
        g_set_error(err, CS_ERROR, CS_ERROR_UNSUPPORTED,
                    "the SimGrid engine's module (%s) could not be loaded: %s", MODULE,
                    why != NULL ? why : "not beside collsim nor in " CS_PKGLIBEXECDIR);
    return ops;
}

static gboolean proxy_open(const cs_engine_job_t *job, void **state_p, GError **err)
{
    const cs_engine_ops_t *ops = load(err);
    return ops != NULL && ops->open(job, state_p, err);
}

/* After open: the module is loaded. */
static gboolean proxy_predict(void *state, const cs_engine_job_t *job, const cs_engine_call_t *call,
                              double time_s[2], GError **err)
{
    const cs_engine_ops_t *ops = load(err);
    return ops != NULL && ops->predict(state, job, call, time_s, err);
}

static gboolean proxy_estimate(void *state, const cs_engine_job_t *job, const cs_engine_call_t *call,
                               cs_engine_cost_t *cost_p, GError **err)
{
    const cs_engine_ops_t *ops = load(err);
    return ops != NULL && ops->estimate(state, job, call, cost_p, err);
}

static void proxy_close(void *state)
{
    const cs_engine_ops_t *ops = load(NULL);
    if (ops != NULL)
        ops->close(state);
}

const cs_engine_ops_t cs_engine_simgrid = {
    .name = "simgrid",
    .description = "rank programs executed as SimGrid actors (CM02 max-min sharing) on a platform "
                   "generated from the topology; a cross-check of the flow engine",
    .open = proxy_open,
    .estimate = proxy_estimate,
    .predict = proxy_predict,
    .close = proxy_close,
};
