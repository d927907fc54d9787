/* wall_follow.c: TurtleBot3 right-hand wall following with the 360-beam lidar (the C twin of
 * the wall_follow driver, coopsim/plugins/drivers/textbook.py).
 * Usage: ./wall_follow [ROBOT] [STEPS]   (ROBOT: $COOPSIM_ROBOT or tb3)
 */
#include <math.h>

#include "coopsim.h"

static int lidar_read = -1, lidar_info = -1;
static int setup(coopsim_robot *bot, coopsim_msg *r);
static int step(coopsim_client *c, coopsim_robot *bot, coopsim_msg *r);
#include "textbook.h"

#define CRUISE 0.15 /* m/s */
#define GAP 0.4     /* m to keep from the wall on the right */
#define PI 3.14159265358979323846

static double angle_min, increment;

static int setup(coopsim_robot *bot, coopsim_msg *r)
{
    lidar_read = need(bot, "lidar", "read", r);
    lidar_info = need(bot, "lidar", "info", r);
    return lidar_read < 0 || lidar_info < 0;
}

/* The return of the beam nearest `deg` degrees from the heading; no return reads as far. */
static double beam(const coopsim_msg *r, double deg)
{
    long n = (long)r->ndata;
    long k = lround((deg * PI / 180.0 - angle_min) / increment) % n;
    double d = r->data[k < 0 ? k + n : k];
    return d > 0 ? d : INFINITY;
}

static double sector(const coopsim_msg *r, int from, int to)
{
    double m = INFINITY;
    for (int a = from; a <= to; a += 5)
        m = fmin(m, beam(r, a));
    return m;
}

static int step(coopsim_client *c, coopsim_robot *bot, coopsim_msg *r)
{
    if (coopsim_call(c, bot->sock, lidar_info, "", NULL, 0, NULL, 0, r) != 0 || r->ndata < 6)
        return 1;
    angle_min = r->data[3];
    increment = r->data[4] > 0 ? r->data[4] : 1.0;
    if (coopsim_call(c, bot->sock, lidar_read, "", NULL, 0, NULL, 0, r) != 0 || r->ndata == 0)
        return 1;
    if (sector(r, -20, 20) < 1.5 * GAP) /* blocked: turn left in place */
        return drive(c, bot, -CRUISE, CRUISE, r);
    double right = sector(r, -100, -80), diag = beam(r, -60) * cos(30.0 * PI / 180.0);
    if (fmin(right, diag) > 3 * GAP) /* lost the wall (a door, a corner): curve right */
        return drive(c, bot, CRUISE, 0.6 * CRUISE, r);
    double steer = 1.5 * (fmin(right, diag) - GAP) / GAP; /* too far: steer right */
    steer = (steer > 0.5 ? 0.5 : (steer < -0.5 ? -0.5 : steer)) * CRUISE;
    return drive(c, bot, CRUISE + steer, CRUISE - steer, r);
}

TEXTBOOK_MAIN("wall_follow", "tb3")
