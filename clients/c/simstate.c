/* simstate.c: print the simulation's state, the JSON of /sim command 23 (`state`), on stdout.
 *
 * Usage: ./simstate [KEYS]   The name server is $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000;
 * KEYS is a CurveZMQ client folder for a simulation started with --keys (default: the keys of
 * $COOPSIM_SERVER_KEY and $COOPSIM_CLIENT_KEY, if set).
 * The JSON grows with every robot and object (about 360 bytes a robot) and is printed whole:
 * the client sizes its reply buffers from each reply.
 */
#include <stdio.h>

#include "coopsim.h"

#define STATE 23 /* /sim's ids are fixed by docs/protocol.md section 4 */

int main(int argc, char **argv)
{
    coopsim_client c;
    coopsim_msg r;
    int status = 1;

    coopsim_msg_init(&r);
    if (coopsim_open_keys(&c, NULL, 5000, argc > 1 ? argv[1] : NULL) != 0) {
        fprintf(stderr, "simstate: %s\n", c.error);
        return 1;
    }
    void *sim = coopsim_port(&c, "/sim", &r);
    if (sim && coopsim_call(&c, sim, STATE, "", NULL, 0, NULL, 0, &r) == 0)
        status = fwrite(r.text, 1, r.text_len, stdout) != r.text_len || putchar('\n') == EOF;
    if (r.error != 0)
        fprintf(stderr, "simstate: error %d: %s\n", r.error, r.text);
    coopsim_close_port(sim);
    coopsim_msg_free(&r);
    coopsim_close(&c);
    return status;
}
