/* textbook.h: the loop the four textbook controllers share (braitenberg.c, wall_follow.c,
 * line_follow.c, kilobot_swarm.c): open the robot, look its command ids up once, then call
 * STEP every iteration until the step count, a signal or an error; stop and detach at the end.
 * The twins in Python are coopsim/plugins/drivers/textbook.py (clients/python/<name>.py).
 *
 * A controller defines `static int step(coopsim_client *c, coopsim_robot *bot, coopsim_msg *r)`
 * (0 to go on) and `static int setup(coopsim_robot *bot, coopsim_msg *r)` (look-ups; 0 = ok),
 * then `#include "textbook.h"` and `TEXTBOOK_MAIN("name", "default robot")`.
 */
#ifndef TEXTBOOK_H
#define TEXTBOOK_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "coopsim.h"

static volatile sig_atomic_t textbook_stop;
static int motors_set = -1, motors_stop = -1;

static void textbook_on_signal(int sig)
{
    (void)sig;
    textbook_stop = 1;
}

/* The id of a command the controller cannot do without; -1 (reported) when the robot lacks it. */
static int need(const coopsim_robot *bot, const char *module, const char *name, coopsim_msg *r)
{
    int id = coopsim_id(bot, module, name, r);
    if (id < 0)
        fprintf(stderr, "%s.%s: error %d: %s\n", module, name, r->error, r->text);
    return id;
}

/* Send wheel speeds (m/s); in lockstep answered after the step that used them (a queued reply:
 * the run is paused, or its first step waits for others; then wait for that step). */
static int drive(coopsim_client *c, coopsim_robot *bot, double left, double right, coopsim_msg *r)
{
    double v[2] = {left, right};
    int code = coopsim_call(c, bot->sock, motors_set, "", NULL, 0, v, 2, r);
    return code ? code : coopsim_await_step(c, r, r);
}

static int textbook_main(const char *name, const char *fallback, int argc, char **argv)
{
    const char *env = getenv("COOPSIM_ROBOT");
    const char *robot = argc > 1 ? argv[1] : (env && *env ? env : fallback);
    long steps = argc > 2 ? atol(argv[2]) : -1;
    coopsim_client c;
    coopsim_robot bot;
    coopsim_msg r;

    signal(SIGINT, textbook_on_signal);
    signal(SIGTERM, textbook_on_signal);
    coopsim_msg_init(&r);
    if (coopsim_open(&c, NULL, 5000) != 0) {
        fprintf(stderr, "%s: %s\n", name, c.error);
        return 1;
    }
    if (coopsim_robot_open(&c, &bot, robot, &r) != 0) {
        fprintf(stderr, "%s: /%s: error %d: %s\n", name, robot, r.error, r.text);
        coopsim_msg_free(&r);
        coopsim_close(&c);
        return 1;
    }
    motors_set = need(&bot, "motors", "set_speeds", &r);
    motors_stop = need(&bot, "motors", "stop", &r);
    int status = motors_set < 0 || motors_stop < 0 || setup(&bot, &r) != 0;
    r.error = 0;
    for (long i = 0; !status && !textbook_stop && (steps < 0 || i < steps); i++)
        if (step(&c, &bot, &r) != 0)
            break;
    if (r.error != 0 && !textbook_stop) { /* a signal interrupts the wait: that is no error */
        fprintf(stderr, "%s: error %d: %s\n", name, r.error, r.text);
        status = 1;
    }
    if (motors_stop >= 0)
        coopsim_call(&c, bot.sock, motors_stop, "", NULL, 0, NULL, 0, &r);
    coopsim_call(&c, bot.sock, COOPSIM_DETACH, "", NULL, 0, NULL, 0, &r); /* never stall a run */
    coopsim_robot_close(&bot);
    coopsim_msg_free(&r);
    coopsim_close(&c);
    return status;
}

#define TEXTBOOK_MAIN(name, fallback)                                                             \
    int main(int argc, char **argv) { return textbook_main(name, fallback, argc, argv); }

#endif
