#ifndef REFRESHD_CLIBPQ_SHIM_H
#define REFRESHD_CLIBPQ_SHIM_H
#include <libpq-fe.h>
#endif
