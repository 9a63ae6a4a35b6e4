#ifndef REFRESHD_CLIBYAML_SHIM_H
#define REFRESHD_CLIBYAML_SHIM_H
#include <yaml.h>
#endif
