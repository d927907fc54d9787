/* arm_stack.c: stack cubes with an arm, in C (the twin of clients/python/arm_stack.py).
 * It asks /sim where the target of COLOR is (list_targets: its z is the surface the stack
 * stands on) and which of the scenario's objects ([OBJECT_n]: the world's walls are WALL_n) lie
 * within REACH of the arm's base (list_objects, list_robots),
 * then picks them, nearest first, and stacks them on the target: above the cube, down to its
 * top, grab, up, over the stack, down, release, up. Every move asks /ROBOT/tool ik for the
 * joint angles (world frame, the tool pointing down), sends them as /ROBOT/joints set_positions
 * (one synchronised move) and then one /ROBOT/joints wait per step until /ROBOT/tool read says
 * the tool point is there and still, so in lockstep one iteration is one step.
 * Usage: ./arm_stack [ROBOT] [COLOR] [SIZE] [SPEED]
 *   ROBOT: $COOPSIM_ROBOT or arm; COLOR: the target's colour (red); SIZE: the cubes' edge, m
 *   (0.04; they stand on the target's surface); SPEED: fraction of the joints' top speeds (0.8).
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coopsim.h"

#define REACH 0.5      /* m: objects this near the base (horizontally) are the arm's */
#define LIFT 0.06      /* m: clearance above cubes and the stack */
#define GRASP 0.005    /* m: the tool point above a cube's top when it grabs */
#define DROP 0.003     /* m: a placed cube's bottom above what it lands on */
#define TOL 0.004      /* m: the tool has arrived this near its goal ... */
#define SETTLE 0.02    /* m/s: ... and moving slower than this */
#define PATIENCE 4000  /* steps a move may take */
#define MAX_CUBES 16
#define PI 3.14159265358979323846

static volatile sig_atomic_t stop_now;
static void on_signal(int sig) { (void)sig; stop_now = 1; }

typedef struct {
    coopsim_client c;
    coopsim_robot bot;
    coopsim_msg r;
    int ik, move_to, set_positions, wait, tool_read, grab, release;
    double speed;
    long steps;
} arm;

static int need(const coopsim_robot *bot, const char *module, const char *name, coopsim_msg *r)
{
    int id = coopsim_id(bot, module, name, r);
    if (id < 0)
        fprintf(stderr, "arm_stack: %s.%s: error %d: %s\n", module, name, r->error, r->text);
    return id;
}

static int tool(arm *a, double p[3])
{
    if (coopsim_call(&a->c, a->bot.sock, a->tool_read, "", NULL, 0, NULL, 0, &a->r) != 0
        || a->r.ndata < 3)
        return -1;
    memcpy(p, a->r.data, 3 * sizeof(double));
    return 0;
}

static double dist(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1])
                + (a[2] - b[2]) * (a[2] - b[2]));
}

/* Move the tool point to (x, y, z), pointing down and facing yaw; 0 when there (or patience
 * ran out), -1 on an error (in a->r). */
static int move(arm *a, double x, double y, double z, double yaw)
{
    double goal[3] = {x, y, z}, here[3], last[3], t_last = -1.0;
    double to[7] = {x, y, z, PI, 0.0, yaw, a->speed}, q[8];
    int n = 0;
    if (coopsim_call(&a->c, a->bot.sock, a->ik, "", NULL, 0, to, 6, &a->r) != 0)
        return -1;
    if (strncmp(a->r.text, "ok ", 3) != 0) /* out of reach: move_to says how far (error 4) */
        return coopsim_call(&a->c, a->bot.sock, a->move_to, "", NULL, 0, to, 7, &a->r) ? -1 : 0;
    char *p = a->r.text + 3, *end;
    strtod(p, &end), p = end, strtod(p, &end), p = end; /* the position and angle errors */
    for (double v = strtod(p, &end); end != p && n < 7; v = strtod(p, &end))
        q[n++] = v, p = end;
    q[n++] = a->speed;
    if (coopsim_call(&a->c, a->bot.sock, a->set_positions, "", NULL, 0, q, n, &a->r) != 0)
        return -1;
    if (tool(a, last) != 0)
        return -1;
    for (int i = 0; i < PATIENCE && !stop_now; i++) {
        if (coopsim_call(&a->c, a->bot.sock, a->wait, "", NULL, 0, NULL, 0, &a->r) != 0
            || a->r.ndata < 1)
            return -1;
        double t = a->r.data[0];
        a->steps++;
        if (tool(a, here) != 0)
            return -1;
        if (t_last >= 0.0 && dist(here, goal) <= TOL
            && dist(here, last) / fmax(t - t_last, 1e-9) <= SETTLE)
            return 0;
        memcpy(last, here, sizeof last);
        t_last = t;
    }
    return 0;
}

static int act(arm *a, int id)
{
    return coopsim_call(&a->c, a->bot.sock, id, "", NULL, 0, NULL, 0, &a->r);
}

/* The target of `color` (x, y, surface z) and this robot's base (x, y) from /sim. */
static int find(arm *a, const char *robot, const char *color, double spot[3], double base[2],
                double cubes[][2], int *n)
{
    void *sim = coopsim_port(&a->c, "/sim", &a->r);
    int found = 0;
    if (sim == NULL)
        return -1;
    if (coopsim_call(&a->c, sim, 12, "", NULL, 0, NULL, 0, &a->r) == 0) { /* list_targets */
        char *line = a->r.text;
        for (size_t k = 0; line && *line && 3 * k + 2 < a->r.ndata; k++) {
            size_t len = strcspn(line, "\n");
            if (!found && len == strlen(color) && strncmp(line, color, len) == 0) {
                memcpy(spot, a->r.data + 3 * k, 3 * sizeof(double));
                found = 1;
            }
            line = line[len] ? line + len + 1 : NULL;
        }
    }
    if (found && coopsim_call(&a->c, sim, 10, "", NULL, 0, NULL, 0, &a->r) == 0) {
        char *line = a->r.text; /* list_robots: names, then 3 numbers per robot */
        found = 0;
        for (size_t k = 0; line && *line && 3 * k + 1 < a->r.ndata; k++) {
            size_t len = strcspn(line, "\n");
            if (len == strlen(robot) && strncmp(line, robot, len) == 0) {
                base[0] = a->r.data[3 * k], base[1] = a->r.data[3 * k + 1];
                found = 1;
            }
            line = line[len] ? line + len + 1 : NULL;
        }
    }
    *n = 0;
    if (found && coopsim_call(&a->c, sim, 11, "", NULL, 0, NULL, 0, &a->r) == 0
        && a->r.nparams > 0 && a->r.params[0] > 0) {
        size_t per = a->r.ndata / (size_t)a->r.params[0]; /* numbers per object's pose */
        char *line = a->r.text; /* names: the scenario's [OBJECT_n], not the world's walls */
        for (int64_t k = 0; line && *line && k < a->r.params[0] && *n < MAX_CUBES; k++) {
            const double *o = a->r.data + per * (size_t)k;
            size_t len = strcspn(line, "\n");
            if (strncmp(line, "OBJECT_", 7) == 0
                && hypot(o[0] - base[0], o[1] - base[1]) <= REACH)
                cubes[*n][0] = o[0], cubes[*n][1] = o[1], (*n)++;
            line = line[len] ? line + len + 1 : NULL;
        }
    }
    coopsim_close_port(sim);
    return found ? 0 : -1;
}

static const double *sort_base;
static int by_distance(const void *pa, const void *pb)
{
    const double *a = pa, *b = pb;
    double da = hypot(a[0] - sort_base[0], a[1] - sort_base[1]);
    double db = hypot(b[0] - sort_base[0], b[1] - sort_base[1]);
    return (da > db) - (da < db);
}

/* Pick the cubes one by one and stack them on spot. */
static int stack(arm *a, const double base[2], double cubes[][2], int n, const double spot[3],
                 double size)
{
    double top = spot[2], grasp = spot[2] + size + GRASP;
    double at = atan2(spot[1] - base[1], spot[0] - base[0]);
    for (int i = 0; i < n && !stop_now; i++) {
        double x = cubes[i][0], y = cubes[i][1], yaw = atan2(y - base[1], x - base[0]);
        double place = top + DROP + size + GRASP;
        if (move(a, x, y, grasp + LIFT, yaw) || move(a, x, y, grasp, yaw) || act(a, a->grab)
            || move(a, x, y, fmax(grasp, top + size + GRASP) + LIFT, yaw)
            || move(a, spot[0], spot[1], place + LIFT, at)
            || move(a, spot[0], spot[1], place, at) || act(a, a->release)
            || move(a, spot[0], spot[1], place + LIFT, at))
            return -1;
        top += size;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *env = getenv("COOPSIM_ROBOT");
    const char *robot = argc > 1 ? argv[1] : (env && *env ? env : "arm");
    const char *color = argc > 2 ? argv[2] : "red";
    double size = argc > 3 ? atof(argv[3]) : 0.04, spot[3], base[2], cubes[MAX_CUBES][2];
    int n = 0, status = 1;
    arm a;
    memset(&a, 0, sizeof a);
    a.speed = argc > 4 ? atof(argv[4]) : 0.8;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    coopsim_msg_init(&a.r);
    if (coopsim_open(&a.c, NULL, 5000) != 0) {
        fprintf(stderr, "arm_stack: %s\n", a.c.error);
        return 1;
    }
    if (coopsim_robot_open(&a.c, &a.bot, robot, &a.r) != 0) {
        fprintf(stderr, "arm_stack: /%s: error %d: %s\n", robot, a.r.error, a.r.text);
        coopsim_msg_free(&a.r);
        coopsim_close(&a.c);
        return 1;
    }
    a.ik = need(&a.bot, "tool", "ik", &a.r);
    a.move_to = need(&a.bot, "tool", "move_to", &a.r);
    a.set_positions = need(&a.bot, "joints", "set_positions", &a.r);
    a.tool_read = need(&a.bot, "tool", "read", &a.r);
    a.wait = need(&a.bot, "joints", "wait", &a.r);
    a.grab = need(&a.bot, "gripper", "grab", &a.r);
    a.release = need(&a.bot, "gripper", "release", &a.r);
    if (a.ik >= 0 && a.move_to >= 0 && a.set_positions >= 0 && a.tool_read >= 0 && a.wait >= 0
        && a.grab >= 0 && a.release >= 0) {
        if (find(&a, robot, color, spot, base, cubes, &n) != 0)
            fprintf(stderr, "arm_stack: no %s target or no robot %s in this run\n", color,
                    robot);
        else {
            sort_base = base;
            qsort(cubes, (size_t)n, sizeof cubes[0], by_distance);
            status = stack(&a, base, cubes, n, spot, size) != 0;
            if (status && !stop_now)
                fprintf(stderr, "arm_stack: error %d: %s\n", a.r.error, a.r.text);
            else
                printf("arm_stack: %s stacked %d cubes in %ld steps\n", robot, n, a.steps);
        }
    }
    while (!status && !stop_now) /* hold still until the run ends (a rule grades the stack) */
        if (coopsim_call(&a.c, a.bot.sock, a.wait, "", NULL, 0, NULL, 0, &a.r) != 0)
            break;
    coopsim_call(&a.c, a.bot.sock, COOPSIM_DETACH, "", NULL, 0, NULL, 0, &a.r);
    coopsim_robot_close(&a.bot);
    coopsim_msg_free(&a.r);
    coopsim_close(&a.c);
    return status;
}
