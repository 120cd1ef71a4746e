/* SPDX-License-Identifier: MIT */
/* metrics and fleet: step records and reports of many nodes, read as hostile input. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "ctx.h"

/* One node: the newest preflight and accept records and the report seen for its host. Records are
 * borrowed from the documents the set owns; NULL when absent. */
struct node {
	char *host;
	json_object *preflight, *accept, *report; /* report: report.json's object or the report step's record */
	char *report_verdict;                     /* accepted|rejected|incomplete, or NULL */
	bool report_signed;
};

struct node_set {
	json_object **docs; /* every input document, owned */
	size_t ndocs;
	struct node *nodes; /* in the order their hosts first appear in the inputs */
	size_t nnodes;
	json_object *inputs; /* [{file, kind, host}, step too when kind is ignored] for the output record, owned */
};

/* Read one input into the set: a swaptool/1 record (preflight and accept are used, report for its
 * verdict, the other steps are listed as ignored) or a report.json. Returns 0, or a ctx_error code:
 * 3 for an unreadable file, bad JSON or a document that is neither. */
int nodes_add_file(struct ctx *ctx, struct node_set *set, const char *path);
void nodes_free(struct node_set *set);

/* Typed number lookups (records are hostile input; objects and arrays: jget_object, jget_array). */
/* A finite number (JSON int or double); false for anything else. */
bool jnum(json_object *o, const char *key, double *out);
/* An exact integer (JSON int); false for anything else. */
bool jint(json_object *o, const char *key, int64_t *out);
/* The drive-class object of a preflight record for "source" or "target" (the drive-class check's,
 * else the identity's class); NULL when absent. */
json_object *node_drive_class(json_object *preflight, const char *side);
