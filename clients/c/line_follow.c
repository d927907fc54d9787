/* line_follow.c: Thymio edge following with the two ground sensors (the C twin of the
 * line_follow driver, coopsim/plugins/drivers/textbook.py).
 * Usage: ./line_follow [ROBOT] [STEPS]   (ROBOT: $COOPSIM_ROBOT or thymio)
 */
#include "coopsim.h"

static int line_read = -1;
static int setup(coopsim_robot *bot, coopsim_msg *r);
static int step(coopsim_client *c, coopsim_robot *bot, coopsim_msg *r);
#include "textbook.h"

#define CRUISE 0.08 /* m/s */
#define TURN 0.6    /* how much the inner wheel slows to veer */

static int setup(coopsim_robot *bot, coopsim_msg *r)
{
    line_read = need(bot, "line", "read", r);
    return line_read < 0;
}

static int step(coopsim_client *c, coopsim_robot *bot, coopsim_msg *r)
{
    if (coopsim_call(c, bot->sock, line_read, "", NULL, 0, NULL, 0, r) != 0 || r->ndata < 2)
        return 1;
    int left = r->data[0] > 0.5, right = r->data[1] > 0.5;
    if (left && !right) /* straddling the edge */
        return drive(c, bot, CRUISE, CRUISE, r);
    if (left && right) /* both on the line: veer right, off it */
        return drive(c, bot, CRUISE, CRUISE * (1 - TURN), r);
    return drive(c, bot, CRUISE * (1 - TURN), CRUISE, r); /* both off: veer left, onto it */
}

TEXTBOOK_MAIN("line_follow", "thymio")
