/* wander.c: drive forward, turn away from whatever the sonar sees (the C twin of
 * clients/python/wander.py).
 *
 * Usage: ./wander [ROBOT] [STEPS]   ROBOT defaults to $COOPSIM_ROBOT or robot1; STEPS to forever.
 * The name server is $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000. In lockstep every loop
 * iteration is one simulation step and one round trip: an exchange (robot command 6) sends the
 * speeds and brings back the sonar of the step that used them.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "coopsim.h"

#define CRUISE 0.35 /* m/s */
#define SAFE 0.6    /* m: obstacles nearer than this make the robot turn */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static double min_of(const double *d, int from, int to)
{
    double m = d[from];
    for (int i = from + 1; i < to; i++)
        m = d[i] < m ? d[i] : m;
    return m;
}

static double cap(double x, double hi) { return x < hi ? x : hi; }

/* Wheel speeds from the 11 sonar distances (index 0 = right side, 5 = ahead, 10 = left). */
static void wander_speeds(const double *d, double speeds[2])
{
    double right = min_of(d, 0, 5), left = min_of(d, 6, 11), ahead = min_of(d, 3, 8);
    if (ahead < SAFE) {
        double turn = right < left ? 1.0 : -1.0; /* turn towards the more open side */
        speeds[0] = -0.2 * turn;
        speeds[1] = 0.2 * turn;
        return;
    }
    double steer = 0.25 * (cap(right, 2.0) - cap(left, 2.0)); /* drift away from near walls */
    speeds[0] = CRUISE + steer;
    speeds[1] = CRUISE - steer;
}

/* The id of a command the controller cannot do without; -1 (reported) when the robot lacks it. */
static int need(const coopsim_robot *bot, const char *module, const char *name, coopsim_msg *r)
{
    int id = coopsim_id(bot, module, name, r);
    if (id < 0)
        fprintf(stderr, "wander: error %d: %s\n", r->error, r->text);
    return id;
}

int main(int argc, char **argv)
{
    const char *env = getenv("COOPSIM_ROBOT");
    const char *robot = argc > 1 ? argv[1] : (env && *env ? env : "robot1");
    long steps = argc > 2 ? atol(argv[2]) : -1;
    coopsim_client c;
    coopsim_robot bot;
    coopsim_msg r, w; /* w: /sim's replies while a queued command waits for its step */

    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    coopsim_msg_init(&r);
    coopsim_msg_init(&w);
    if (coopsim_open(&c, NULL, 5000) != 0) {
        fprintf(stderr, "wander: %s\n", c.error);
        return 1;
    }
    if (coopsim_robot_open(&c, &bot, robot, &r) != 0) {
        fprintf(stderr, "wander: /%s: error %d: %s\n", robot, r.error, r.text);
        coopsim_msg_free(&r);
        coopsim_close(&c);
        return 1;
    }
    /* Ids as this robot declares them (command 3), looked up once, before the loop. */
    int sonar = need(&bot, "sonar", "read", &r);
    int set_speeds = need(&bot, "motors", "set_speeds", &r);
    int stop_motors = need(&bot, "motors", "stop", &r);
    int status = sonar < 0 || set_speeds < 0 || stop_motors < 0;
    r.error = 0;
    /* The first distances by a read; then each step is one exchange: the speeds go out and the
     * step's distances come back in the reply (in lockstep, after the step that used them). */
    const double *d = NULL;
    size_t n = 0;
    if (!status && coopsim_call(&c, bot.sock, sonar, "", NULL, 0, NULL, 0, &r) == 0) {
        d = r.data;
        n = r.ndata;
    }
    for (long i = 0; d && !status && !stop && (steps < 0 || i < steps); i++) {
        double speeds[2];
        if (n != 11) {
            fprintf(stderr, "wander: the sonar gave %zu distances, not 11\n", n);
            status = 1;
            break;
        }
        wander_speeds(d, speeds);
        if (coopsim_exchange(&c, &bot, set_speeds, speeds, 2, &sonar, 1, &r) != 0)
            break;
        /* queued (the run paused, or its first step waiting for others): wait for the step that
         * uses the speeds, so that one iteration stays one step */
        if (coopsim_await_step(&c, &r, &w) != 0) {
            fprintf(stderr, "wander: /sim: error %d: %s\n", w.error, w.text);
            status = 1;
            break;
        }
        d = coopsim_exchange_read(&r, 0, &n, NULL);
    }
    if (r.error != 0 && !stop) { /* a signal interrupts the wait: that is no error */
        fprintf(stderr, "wander: error %d: %s\n", r.error, r.text);
        status = 1;
    }
    if (stop_motors >= 0) /* stop the wheels */
        coopsim_call(&c, bot.sock, stop_motors, "", NULL, 0, NULL, 0, &r);
    coopsim_call(&c, bot.sock, COOPSIM_DETACH, "", NULL, 0, NULL, 0, &r); /* do not stall the run */
    coopsim_robot_close(&bot);
    coopsim_msg_free(&r);
    coopsim_msg_free(&w);
    coopsim_close(&c);
    return status;
}
