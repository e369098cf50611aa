/* Reads NCCL's choice of algorithm, protocol and channels for each
 * collective from its INFO TUNING lines. The format is that of NCCL v2.28.9
 * src/enqueue.cc:822 (INFO(NCCL_TUNING, "%s: %ld Bytes -> Algo %s proto %s
 * channel{Lo..Hi}={%d..%d}")), with names from src/collectives.cc
 * (ncclFuncToString, ncclAlgoToString "RING", ncclProtoToString "SIMPLE"). */
#include "config.h"
#include "real/real_int.h"

#include <stdio.h>
#include <string.h>

const char *cs_tuning_func_name(cs_coll_t c)
{
    static const char *const names[CS_COLL_COUNT] = {
        [CS_COLL_BROADCAST] = "Broadcast", [CS_COLL_REDUCE] = "Reduce", [CS_COLL_ALLGATHER] = "AllGather",
        [CS_COLL_REDUCESCATTER] = "ReduceScatter", [CS_COLL_ALLREDUCE] = "AllReduce",
    };
    return (int)c >= 0 && c < CS_COLL_COUNT ? names[c] : "";
}

/* NCCL's upper-case names ("COLLNET_DIRECT", "SIMPLE") to ours. */
static gboolean algo_name(const char *nccl, char *out, size_t len)
{
    g_autofree char *plain = g_strdup(nccl);
    char *w = plain;
    for (const char *p = nccl; *p; p++)
        if (*p != '_')
            *w++ = *p;
    *w = 0;
    cs_algo_t a;
    if (!cs_algo_parse(plain, &a) && !cs_algo_parse(nccl, &a))
        return FALSE;
    g_strlcpy(out, cs_algo_name(a), len);
    return TRUE;
}

static gboolean proto_name(const char *nccl, char *out, size_t len)
{
    cs_proto_t p;
    if (!cs_proto_parse(nccl, &p))
        return FALSE;
    g_strlcpy(out, cs_proto_name(p), len);
    return TRUE;
}

gboolean cs_tuning_parse_line(const char *line, cs_tuning_line_t *out_p)
{
    const char *info = strstr(line, "NCCL INFO ");
    if (info == NULL)
        return FALSE;
    info += strlen("NCCL INFO ");
    cs_tuning_line_t t;
    memset(&t, 0, sizeof t);
    char algo[32], proto[32];
    unsigned long long bytes;
    int lo, hi, end = 0;
    if (sscanf(info, "%23[A-Za-z]: %llu Bytes -> Algo %31s proto %31s channel{Lo..Hi}={%d..%d}%n", t.func, &bytes,
               algo, proto, &lo, &hi, &end) != 6 || end == 0 || hi < lo)
        return FALSE;
    if (!algo_name(algo, t.algo, sizeof t.algo) || !proto_name(proto, t.proto, sizeof t.proto))
        return FALSE;
    t.bytes = bytes;
    t.nchannels = hi - lo + 1;
    *out_p = t;
    return TRUE;
}

gboolean cs_tuning_find(const char *log, cs_coll_t c, guint64 bytes, cs_tuning_line_t *out_p)
{
    gboolean found = FALSE;
    const char *func = cs_tuning_func_name(c);
    for (const char *p = log; p != NULL && *p; ) {
        const char *nl = strchr(p, '\n');
        g_autofree char *line = nl != NULL ? g_strndup(p, nl - p) : g_strdup(p);
        cs_tuning_line_t t;
        if (strstr(line, "Bytes -> Algo") != NULL && cs_tuning_parse_line(line, &t) && strcmp(t.func, func) == 0
            && t.bytes == bytes) {
            *out_p = t;
            found = TRUE;
        }
        p = nl != NULL ? nl + 1 : NULL;
    }
    return found;
}
