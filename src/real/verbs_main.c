/* collsim real --verbs: the entry point W2's `collsim real` calls. */
#include "config.h"

#include <stdio.h>

#include "real/cs_verbs.h"
#include "real/verbs_int.h"

int cs_verbs_main(int argc, char **argv)
{
    vb_opts_t o;
    vb_opts_init(&o);
    g_autoptr(GError) err = NULL;
    int status;
    if (!vb_opts_parse(&o, argc, argv, &err)) {
        fprintf(stderr, "%s\n", err->message);
        status = 2;
    } else {
        status = vb_run(&o);
    }
    vb_opts_clear(&o);
    return status;
}
