/* braitenberg.c: e-puck obstacle avoidance, Braitenberg's vehicle 3b on the 8 IR proximity
 * sensors (the C twin of the braitenberg driver, coopsim/plugins/drivers/textbook.py).
 * Usage: ./braitenberg [ROBOT] [STEPS]   (ROBOT: $COOPSIM_ROBOT or epuck1)
 */
#include "coopsim.h"

static int static_prox = -1;
static int setup(coopsim_robot *bot, coopsim_msg *r);
static int step(coopsim_client *c, coopsim_robot *bot, coopsim_msg *r);
#include "textbook.h"

#define CRUISE 0.1        /* m/s */
#define GAIN 2.0          /* a reading at saturation steers by GAIN x CRUISE */
#define SATURATION 4095.0 /* the sensors' reading at contact */

/* (left, right) weight of IR0..IR7 (front right round the back to front left): an obstacle
 * ahead-right slows the left wheel and speeds the right one, so the robot turns away. */
static const double W[8][2] = {{-1.0, 1.0}, {-0.8, 0.8}, {-0.4, 0.4}, {0, 0},
                               {0, 0},      {0.4, -0.4}, {0.8, -0.8}, {1.0, -1.0}};

static int setup(coopsim_robot *bot, coopsim_msg *r)
{
    static_prox = need(bot, "proximity", "read", r);
    return static_prox < 0;
}

static int step(coopsim_client *c, coopsim_robot *bot, coopsim_msg *r)
{
    double x[8], left = CRUISE, right = CRUISE;
    if (coopsim_call(c, bot->sock, static_prox, "", NULL, 0, NULL, 0, r) != 0 || r->ndata < 8)
        return 1;
    for (int i = 0; i < 8; i++) {
        x[i] = r->data[i] / SATURATION;
        x[i] = x[i] < 0 ? 0 : (x[i] > 1 ? 1 : x[i]);
        left += GAIN * CRUISE * W[i][0] * x[i];
        right += GAIN * CRUISE * W[i][1] * x[i];
    }
    if (x[0] > 0.02 && x[7] > 0.02) { /* straight ahead: turn in place, away from the nearer side */
        double turn = x[0] + x[1] >= x[6] + x[7] ? CRUISE : -CRUISE;
        left = -turn;
        right = turn;
    }
    return drive(c, bot, left, right, r);
}

TEXTBOOK_MAIN("braitenberg", "epuck1")
