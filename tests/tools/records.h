/* SPDX-License-Identifier: MIT */
/* Test fixtures: step records with the incident's numbers, built by the code that builds every
 * record (src/record.h) with the names src/schema.h declares, so that a fixture cannot drift from
 * what the steps write and read. tests/fixtures/records-lib.sh writes them through mkrecord. */
#pragma once

#include "record.h"

/* The fixtures by name: preflight, backup, plan, clone, restore, verify, accept (dgx4, a finished
 * fresh-install swap that passes everything), report (report's own record), dgx4-accept (the
 * failing XG7000 candidate at 98 GB), dgx5-accept (the reference node), and accept-long and
 * dgx5-accept-long: the same two with histograms, IOPS per second and a long sweep (accept-long a
 * sustained load too), as real runs record them. */
extern const char *const fixture_names[];
extern const size_t fixture_names_n;
/* The fixture's record (caller frees with json_object_put), or NULL for an unknown name. */
json_object *fixture_record(const char *name);
