/* kilobot_swarm.c: Kilobot aggregation by IR messaging (the C twin of the kilobot_swarm
 * driver, coopsim/plugins/drivers/textbook.py): broadcast a one-byte message every step, count
 * the neighbours heard (distance only, as a Kilobot knows it); rest among QUORUM or more,
 * random-walk (runs and tumbles) otherwise. Its LED shows the state: green resting, red walking.
 * Usage: ./kilobot_swarm [ROBOT] [STEPS]   (ROBOT: $COOPSIM_ROBOT or kb1)
 */
#include <stdlib.h>

#include "coopsim.h"

static int radio_send = -1, radio_read = -1, leds_set = -1;
static int setup(coopsim_robot *bot, coopsim_msg *r);
static int step(coopsim_client *c, coopsim_robot *bot, coopsim_msg *r);
#include "textbook.h"

#define QUORUM 2   /* neighbours heard to rest */
#define RUN 100    /* steps of a straight run */
#define TUMBLE 60  /* most steps of a tumble */
#define HELLO "AQ==" /* base64 of msgpack 1: "I am here" */

static int left_steps, turning, showing = -1; /* the state the LED shows: -1 none yet */

static int setup(coopsim_robot *bot, coopsim_msg *r)
{
    radio_send = need(bot, "radio", "send", r);
    radio_read = need(bot, "radio", "read", r);
    leds_set = need(bot, "leds", "set", r);
    srand((unsigned)coopsim_seed(bot->name + (bot->name[0] == '/'), 12345u)); /* the run's stream for this robot */
    return radio_send < 0 || radio_read < 0 || leds_set < 0;
}

static int step(coopsim_client *c, coopsim_robot *bot, coopsim_msg *r)
{
    if (coopsim_call(c, bot->sock, radio_send, HELLO, NULL, 0, NULL, 0, r) != 0 ||
        coopsim_call(c, bot->sock, radio_read, "", NULL, 0, NULL, 0, r) != 0)
        return 1;
    int rest = r->ndata / 3 >= QUORUM; /* three numbers per message: range, bearing, step */
    if (rest != showing) { /* an action: sent on a change only */
        double green[3] = {0, 200, 0}, red[3] = {200, 0, 0};
        if (coopsim_call(c, bot->sock, leds_set, "", NULL, 0, rest ? green : red, 3, r) != 0)
            return 1;
        showing = rest;
    }
    if (rest)
        return drive(c, bot, 0.0, 0.0, r);
    if (left_steps <= 0) {
        turning = turning ? 0 : (rand() % 2 ? 1 : -1);
        left_steps = turning ? 1 + rand() % TUMBLE : RUN;
    }
    left_steps--;
    /* 1 m/s saturates at motors.max_speed: a Kilobot's 1 cm/s */
    return turning ? drive(c, bot, -turning, turning, r) : drive(c, bot, 1.0, 1.0, r);
}

TEXTBOOK_MAIN("kilobot_swarm", "kb1")
