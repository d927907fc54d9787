/* ids.c: print the ids a robot declares for its commands, looked up by module and name.
 *
 * Usage: ./ids ROBOT MODULE.NAME...   e.g. ./ids robot1 motors.set_speeds sonar.read detach
 * prints one line `MODULE.NAME ID` per argument (a name without a module is one of the commands
 * every robot has). A name the robot lacks prints `ids: error 5: ...` and exits 1. The name
 * server is $COOPSIM_NAMESERVER or tcp://127.0.0.1:10000.
 */
#include <stdio.h>
#include <string.h>

#include "coopsim.h"

/* Look "module.name" (or "name") up; print it and its id. Returns 0, or 1 when it is missing. */
static int print_id(const coopsim_robot *bot, const char *arg, coopsim_msg *r)
{
    char module[128] = "";
    const char *dot = strchr(arg, '.'), *name = dot ? dot + 1 : arg;
    if (dot)
        snprintf(module, sizeof module, "%.*s", (int)(dot - arg), arg);
    int id = coopsim_id(bot, module, name, r);
    if (id < 0) {
        fprintf(stderr, "ids: error %d: %s\n", r->error, r->text);
        return 1;
    }
    printf("%s %d\n", arg, id);
    return 0;
}

int main(int argc, char **argv)
{
    coopsim_client c;
    coopsim_robot bot;
    coopsim_msg r;
    int status = 0;

    if (argc < 3) {
        fprintf(stderr, "usage: ids ROBOT MODULE.NAME...\n");
        return 2;
    }
    coopsim_msg_init(&r);
    if (coopsim_open(&c, NULL, 5000) != 0) {
        fprintf(stderr, "ids: %s\n", c.error);
        return 1;
    }
    if (coopsim_robot_open(&c, &bot, argv[1], &r) != 0) {
        fprintf(stderr, "ids: /%s: error %d: %s\n", argv[1], r.error, r.text);
        status = 1;
    } else {
        for (int i = 2; i < argc && status == 0; i++)
            status = print_id(&bot, argv[i], &r);
        coopsim_robot_close(&bot);
    }
    coopsim_msg_free(&r);
    coopsim_close(&c);
    return status;
}
