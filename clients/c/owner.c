/* owner.c: robot ownership from C (docs/protocol.md section 3, "Ownership").
 *
 * Usage: ./owner ROBOT
 * Tries to stop ROBOT (a motion command), then claims it with force, stops it, and releases
 * it, printing one line per step: `move: ok`, or `move: error 11: ROBOT is owned by ...` when
 * another connection owns the robot. The name server is $COOPSIM_NAMESERVER or the default.
 */
#include <stdio.h>

#include "coopsim.h"

static void say(const char *what, int rc, const coopsim_msg *r)
{
    if (rc == 0)
        printf("%s: ok %s\n", what, r->text);
    else
        printf("%s: error %d: %s\n", what, rc, r->text);
}

int main(int argc, char **argv)
{
    coopsim_client c;
    coopsim_robot bot;
    coopsim_msg r;

    if (argc != 2) {
        fprintf(stderr, "usage: owner ROBOT\n");
        return 2;
    }
    coopsim_msg_init(&r);
    if (coopsim_open(&c, NULL, 5000) != 0) {
        fprintf(stderr, "owner: %s\n", c.error);
        return 1;
    }
    if (coopsim_robot_open(&c, &bot, argv[1], &r) != 0) {
        fprintf(stderr, "owner: /%s: error %d: %s\n", argv[1], r.error, r.text);
        coopsim_close(&c);
        return 1;
    }
    say("move", coopsim_invoke(&c, &bot, "motors", "stop", "", NULL, 0, NULL, 0, &r), &r);
    say("claim", coopsim_claim(&c, &bot, 1, &r), &r);
    say("move", coopsim_invoke(&c, &bot, "motors", "stop", "", NULL, 0, NULL, 0, &r), &r);
    say("release", coopsim_release(&c, &bot, &r), &r);
    coopsim_robot_close(&bot);
    coopsim_msg_free(&r);
    coopsim_close(&c);
    return 0;
}
