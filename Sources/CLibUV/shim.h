#ifndef REFRESHD_CLIBUV_SHIM_H
#define REFRESHD_CLIBUV_SHIM_H
#include <uv.h>
#include <signal.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#endif
