#ifndef REFRESHD_CSQLITE_SHIM_H
#define REFRESHD_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
