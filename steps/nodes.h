/* SPDX-License-Identifier: MIT */
/* metrics and fleet: step records and reports of many nodes, read as hostile input. */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "ctx.h"
#include "util.h"

/* A record with drives that a node holds, and where it came from: two of one node must show the
 * same drives. */
struct node_seen {
	json_object *rec; /* a preflight or accept record, borrowed */
	char *file;
	bool named; /* given by --node */
};

/* One node: the newest preflight and accept records and the report seen for it. Records are
 * borrowed from the documents the set owns; NULL when absent. */
struct node {
	char *host;                               /* the key: --node NAME, else the records' host */
	struct strlist claimed;                   /* hosts its --node records claim that are not NAME */
	json_object *preflight, *accept, *report; /* report: report.json's object or the report step's record */
	const char *report_host;                  /* the host the report claims, borrowed */
	char *report_verdict;                     /* accepted|rejected|incomplete, or NULL */
	bool report_signed;
	struct node_seen *seen;
	size_t nseen;
};

struct node_set {
	json_object **docs; /* every input document, owned */
	size_t ndocs;
	struct node *nodes; /* in the order they first appear in the inputs */
	size_t nnodes;
	json_object *inputs; /* [{file, kind, host, node}, step too when kind is ignored] for the output record, owned */
};

/* The inputs as the command line gives them, in its order: RECORD operands (name NULL) and
 * --node NAME=FILE (name owned, file borrowed from argv). */
struct node_input {
	char *name;
	const char *file;
};
struct node_inputs {
	struct node_input *v;
	size_t n;
};
/* --node NAME=FILE: 0, or exit 2 when it is not NAME=FILE or NAME is no host name. */
int nodes_input_option(struct ctx *ctx, struct node_inputs *in, const char *arg);
void nodes_input_record(struct node_inputs *in, const char *file);
void nodes_inputs_free(struct node_inputs *in);

/* Read every input into the set: a swaptool/1 record (preflight and accept are used, report for
 * its verdict, the other steps are listed as ignored) or a report.json. A node is its --node NAME,
 * else the host its record claims. Returns 0, or a ctx_error code: 3 for an unreadable file, bad
 * JSON, a document that is neither, or two records of one node that show different drives. */
int nodes_read(struct ctx *ctx, struct node_set *set, const struct node_inputs *in);
void nodes_free(struct node_set *set);

/* Typed number lookups (records are hostile input; objects and arrays: jget_object, jget_array). */
/* A finite number (JSON int or double); false for anything else. */
bool jnum(json_object *o, const char *key, double *out);
/* An exact integer (JSON int); false for anything else. */
bool jint(json_object *o, const char *key, int64_t *out);
/* The drive-class object of a preflight record for "source" or "target" (the drive-class check's,
 * else the identity's class); NULL when absent. */
json_object *node_drive_class(json_object *preflight, const char *side);
