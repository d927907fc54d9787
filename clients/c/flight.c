/* flight.c: a Crazyflie's cascaded flight controller in C (the twin of the flight driver,
 * coopsim/plugins/drivers/flight.py, and coopsim/swarm/flight.py's math): each step it reads
 * /ROBOT/imu and /ROBOT/mocap, estimates position and velocity (an alpha-beta filter on the
 * mocap position driven by the accelerometer), runs position (P) -> velocity (PI) -> thrust
 * vector -> roll, pitch, yaw-rate set points -> body rates (P) -> torques -> the X frame's mixer,
 * and sends the four propeller speeds with /ROBOT/rotors set_rotors (the reference riding
 * along). The airframe is the Crazyflie 2.x's (the crazyflie type's defaults).
 * Usage: ./flight [ROBOT] [STEPS] [hover|eight] [DT]
 *   ROBOT: $COOPSIM_ROBOT or cf1; STEPS: -1 for ever; DT: the scenario's step, s (0.005).
 * The reference: the start x, y at 1 m; `eight`: after 3 s there, a lemniscate of Gerono in
 * the x-y plane, 1 m to each end, one lap every 8 s. In lockstep one iteration is one step.
 * The controller's clock is the mocap reading's step (its reply's params[0]) times DT, counted
 * from the first reading: in real time too, however late it connected; an iteration that finds
 * no new step sends its last command again.
 */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coopsim.h"

#define G 9.81
#define PI 3.14159265358979323846
/* the Crazyflie 2.x (docs/robots.md) */
#define MASS 0.027
#define ARM 0.046
#define KF 2.22e-8
#define KM (2.22e-8 * 0.005964552)
#define MAX_SPEED 2500.0
static const double INERTIA[3] = {1.657171e-5, 1.6655602e-5, 2.9261652e-5};
/* gains: coopsim.swarm.flight.Gains' defaults */
#define K_POS 2.0
#define K_VEL 5.0
#define K_VEL_I 2.0
#define VEL_I_MAX 2.0
#define K_ATT 12.0
#define K_YAW 3.0
#define K_RATE 60.0
#define K_RATE_YAW 15.0
#define MAX_TILT 0.6
#define MAX_RATE 10.0
#define HEIGHT 1.0
#define SIZE 1.0
#define PERIOD 8.0
#define TAKEOFF 3.0

static volatile sig_atomic_t stop_now;
static void on_signal(int sig) { (void)sig; stop_now = 1; }

static double clampd(double v, double lo, double hi) { return v < lo ? lo : (v > hi ? hi : v); }

static void rotate(const double q[4], const double v[3], double out[3])
{ /* body -> world: v + 2w (u x v) + 2 u x (u x v) */
    const double *u = q + 1;
    double t[3] = {2 * (u[1] * v[2] - u[2] * v[1]), 2 * (u[2] * v[0] - u[0] * v[2]),
                   2 * (u[0] * v[1] - u[1] * v[0])};
    out[0] = v[0] + q[0] * t[0] + u[1] * t[2] - u[2] * t[1];
    out[1] = v[1] + q[0] * t[1] + u[2] * t[0] - u[0] * t[2];
    out[2] = v[2] + q[0] * t[2] + u[0] * t[1] - u[1] * t[0];
}

static void euler(const double q[4], double e[3])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    e[0] = atan2(2 * (w * x + y * z), 1 - 2 * (x * x + y * y));
    e[1] = asin(clampd(2 * (w * y - z * x), -1, 1));
    e[2] = atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z));
}

typedef struct { double p[3], v[3], integral[3], centre[3], yaw0; int ready; } state;

/* The reference at time s after the start: position, velocity, acceleration, yaw, yaw rate. */
static void reference(const state *st, int eight, double s, double ref[11])
{
    memset(ref, 0, 11 * sizeof(double));
    for (int i = 0; i < 3; i++)
        ref[i] = st->centre[i];
    ref[9] = st->yaw0;
    double t = s - TAKEOFF, w = 2 * PI / PERIOD;
    if (!eight || t < 0)
        return;
    ref[0] += SIZE * sin(w * t);
    ref[1] += 0.5 * SIZE * sin(2 * w * t);
    ref[3] = SIZE * w * cos(w * t);
    ref[4] = SIZE * w * cos(2 * w * t);
    ref[6] = -SIZE * w * w * sin(w * t);
    ref[7] = -2 * SIZE * w * w * sin(2 * w * t);
}

/* One control step: imu (6), mocap (7) -> four propeller speeds (rad/s). */
static void control(state *st, const double *imu, const double *mocap, const double ref[11],
                    double dt, double speeds[4])
{
    const double *q = mocap + 3;
    double a[3], e[3], f[3], zb[3], z[3] = {0, 0, 1};
    rotate(q, imu, a);
    a[2] -= G;
    for (int i = 0; i < 3; i++) { /* the alpha-beta filter (0.6, 0.15) */
        double pp = st->p[i] + st->v[i] * dt + 0.5 * a[i] * dt * dt, vp = st->v[i] + a[i] * dt;
        double r = mocap[i] - pp;
        st->p[i] = st->ready ? pp + 0.6 * r : mocap[i];
        st->v[i] = st->ready ? vp + 0.15 / (dt > 1e-9 ? dt : 1e-9) * r : 0.0;
    }
    st->ready = 1;
    double acc[3], cap = VEL_I_MAX / K_VEL_I;
    for (int i = 0; i < 3; i++) { /* position P, velocity PI, feed-forward */
        double err = ref[3 + i] + K_POS * (ref[i] - st->p[i]) - st->v[i];
        st->integral[i] = clampd(st->integral[i] + err * dt, -cap, cap);
        acc[i] = ref[6 + i] + K_VEL * err + K_VEL_I * st->integral[i];
    }
    acc[2] = fmax(acc[2], -0.8 * G);
    double h = hypot(acc[0], acc[1]), limit = (acc[2] + G) * tan(MAX_TILT);
    double scale = h > limit ? limit / h : 1.0;
    f[0] = MASS * acc[0] * scale, f[1] = MASS * acc[1] * scale, f[2] = MASS * (acc[2] + G);
    euler(q, e);
    rotate(q, z, zb);
    double thrust = clampd(f[0] * zb[0] + f[1] * zb[1] + f[2] * zb[2], 0, 4 * KF * MAX_SPEED * MAX_SPEED);
    double c = cos(e[2]), s = sin(e[2]);
    double fx = c * f[0] + s * f[1], fy = -s * f[0] + c * f[1];
    double want[3] = {atan2(-fy, hypot(fx, f[2])), atan2(fx, f[2]), 0};
    double yaw_err = fmod(ref[9] - e[2] + 3 * PI, 2 * PI) - PI;
    double rates[3] = {clampd(K_ATT * (want[0] - e[0]), -MAX_RATE, MAX_RATE),
                       clampd(K_ATT * (want[1] - e[1]), -MAX_RATE, MAX_RATE),
                       ref[10] + K_YAW * yaw_err};
    const double *gyro = imu + 3, k[3] = {K_RATE, K_RATE, K_RATE_YAW};
    double iw[3], tau[3];
    for (int i = 0; i < 3; i++)
        iw[i] = INERTIA[i] * gyro[i];
    double gyroscopic[3] = {gyro[1] * iw[2] - gyro[2] * iw[1], gyro[2] * iw[0] - gyro[0] * iw[2],
                            gyro[0] * iw[1] - gyro[1] * iw[0]};
    for (int i = 0; i < 3; i++)
        tau[i] = INERTIA[i] * k[i] * (rates[i] - gyro[i]) + gyroscopic[i];
    /* the X frame's mixer: rotor 1 front right, 2 back right, 3 back left, 4 front left */
    double d4 = 4 * ARM / sqrt(2.0), c4 = 4 * KM / KF, t4 = thrust / 4;
    double tx = tau[0] / d4, ty = tau[1] / d4, tz = tau[2] / c4;
    double rotor[4] = {t4 - tx - ty + tz, t4 - tx + ty - tz, t4 + tx + ty + tz, t4 + tx - ty - tz};
    for (int i = 0; i < 4; i++)
        speeds[i] = fmin(sqrt(clampd(rotor[i], 0, KF * MAX_SPEED * MAX_SPEED) / KF), MAX_SPEED);
}

static int need(const coopsim_robot *bot, const char *module, const char *name, coopsim_msg *r)
{
    int id = coopsim_id(bot, module, name, r);
    if (id < 0)
        fprintf(stderr, "flight: %s.%s: error %d: %s\n", module, name, r->error, r->text);
    return id;
}

int main(int argc, char **argv)
{
    const char *env = getenv("COOPSIM_ROBOT");
    const char *robot = argc > 1 ? argv[1] : (env && *env ? env : "cf1");
    long steps = argc > 2 ? atol(argv[2]) : -1;
    int eight = !(argc > 3 && strcmp(argv[3], "hover") == 0);
    double dt = argc > 4 ? atof(argv[4]) : 0.005;
    coopsim_client c;
    coopsim_robot bot;
    coopsim_msg r;
    state st;
    memset(&st, 0, sizeof st);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    coopsim_msg_init(&r);
    if (coopsim_open(&c, NULL, 5000) != 0) {
        fprintf(stderr, "flight: %s\n", c.error);
        return 1;
    }
    if (coopsim_robot_open(&c, &bot, robot, &r) != 0) {
        fprintf(stderr, "flight: /%s: error %d: %s\n", robot, r.error, r.text);
        coopsim_msg_free(&r);
        coopsim_close(&c);
        return 1;
    }
    int imu_read = need(&bot, "imu", "read", &r), mocap_read = need(&bot, "mocap", "read", &r);
    int set = need(&bot, "rotors", "set_rotors", &r), off = need(&bot, "rotors", "stop", &r);
    int status = imu_read < 0 || mocap_read < 0 || set < 0 || off < 0;
    r.error = 0;
    long step0 = 0, last = 0;
    double out[7] = {0};
    for (long i = 0; !status && !stop_now && (steps < 0 || i < steps); i++) {
        double imu[6], mocap[7], ref[11];
        if (coopsim_call(&c, bot.sock, imu_read, "", NULL, 0, NULL, 0, &r) != 0 || r.ndata < 6)
            break;
        memcpy(imu, r.data, sizeof imu);
        if (coopsim_call(&c, bot.sock, mocap_read, "", NULL, 0, NULL, 0, &r) != 0 || r.ndata < 7)
            break;
        memcpy(mocap, r.data, sizeof mocap);
        long step = r.nparams ? (long)r.params[0] : step0 + i;
        if (i > 0 && step <= last) { /* no step since the last reading: the same command */
            if (coopsim_call(&c, bot.sock, set, "", NULL, 0, out, 7, &r) != 0)
                break;
            continue;
        }
        if (i == 0) { /* the centre: where it starts, at HEIGHT */
            step0 = step;
            double e[3];
            euler(mocap + 3, e);
            st.centre[0] = mocap[0], st.centre[1] = mocap[1], st.centre[2] = HEIGHT;
            st.yaw0 = e[2];
        }
        reference(&st, eight, (double)(step - step0) * dt, ref);
        control(&st, imu, mocap, ref, i ? (double)(step - last) * dt : 0.0, out);
        last = step;
        memcpy(out + 4, ref, 3 * sizeof(double));
        if (coopsim_call(&c, bot.sock, set, "", NULL, 0, out, 7, &r) != 0)
            break;
    }
    if (r.error != 0 && !stop_now) {
        fprintf(stderr, "flight: error %d: %s\n", r.error, r.text);
        status = 1;
    }
    if (off >= 0)
        coopsim_call(&c, bot.sock, off, "", NULL, 0, NULL, 0, &r);
    coopsim_call(&c, bot.sock, COOPSIM_DETACH, "", NULL, 0, NULL, 0, &r); /* never stall a run */
    coopsim_robot_close(&bot);
    coopsim_msg_free(&r);
    coopsim_close(&c);
    return status;
}
