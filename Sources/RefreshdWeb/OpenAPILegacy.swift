/// The dashboard's OpenAPI 3.1 document, served at `/api/openapi.json`: every `/api/` endpoint,
/// its parameters and its responses, with JSON Schemas of the pages' facts (`Models.swift`) and
/// of the engine types they carry. Edited here, as the JSON it is; the tests check real responses
/// against it (`OpenAPITests`: every endpoint validated with `jsonschema`, then a bounded
/// schemathesis fuzz). Objects the dashboard defines are closed (`additionalProperties: false`),
/// so a field added to a page's facts must be added here too; the engine's shapes are open.
enum OpenAPILegacy {
    static let document = #"""
{
 "openapi": "3.1.0",
 "info": {
  "title": "refreshd dashboard API",
  "version": "1",
  "description": "The facts of the dashboard's pages as JSON, its event stream, and its actions (POST with Authorization: Bearer TOKEN). Instants are ISO 8601 UTC text with milliseconds. Errors under /api/ are the control socket's failure reply."
 },
 "paths": {
  "/api/overview": {
   "get": {
    "summary": "The overview page's facts",
    "responses": {
     "200": {
      "description": "The overview page's facts",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Overview"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/Busy"
     }
    }
   }
  },
  "/api/failures": {
   "get": {
    "summary": "The Failures page's facts: retrying, retries exhausted, runs expired or crashed, notifications held or given up",
    "responses": {
     "200": {
      "description": "The Failures page's facts",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Failures"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/Busy"
     }
    }
   }
  },
  "/api/failures/retry": {
   "post": {
    "summary": "Retry now, in bulk: a list of the Failures page as it is now (`list`), or the jobs and instances named (`id`, repeated), each submitted for now (`ctl submit`); 409 when any was refused",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "name": "list",
      "in": "query",
      "required": false,
      "schema": {"type": "string", "enum": ["retrying", "exhausted", "all"]}
     },
     {
      "name": "id",
      "in": "query",
      "required": false,
      "schema": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 512}, "maxItems": 1000},
      "style": "form",
      "explode": true
     }
    ],
    "responses": {
     "200": {
      "$ref": "#/components/responses/Done"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/NoToken"
     },
     "403": {
      "$ref": "#/components/responses/WrongToken"
     },
     "409": {
      "$ref": "#/components/responses/Refused"
     },
     "503": {
      "$ref": "#/components/responses/NotSaved"
     }
    }
   }
  },
  "/api/jobs": {
   "get": {
    "summary": "The jobs page's facts: a page of the jobs a search finds (every job without one), by identifier, with its position",
    "parameters": [
     {"$ref": "#/components/parameters/SearchText"},
     {"$ref": "#/components/parameters/SearchState"},
     {"name": "after", "in": "query", "required": false, "description": "the next page: the jobs after this identifier (page.next)", "schema": {"type": "string", "minLength": 1, "maxLength": 512}},
     {"name": "before", "in": "query", "required": false, "description": "the previous page: the jobs before this identifier (page.previous); not with after", "schema": {"type": "string", "minLength": 1, "maxLength": 512}}
    ],
    "responses": {
     "400": {
      "description": "a bad ?q=, ?state=, or ?after= with ?before=",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "200": {
      "description": "The jobs page's facts",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Jobs"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/Busy"
     }
    }
   }
  },
  "/api/jobs/{id}": {
   "get": {
    "summary": "One job's page: its row, a page of its runs, its next slots, notifications, a template's instances",
    "responses": {
     "200": {
      "description": "One job's page: its row, a page of its runs, its next slots, notifications, a template's instances",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Job"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/Busy"
     },
     "400": {
      "description": "a bad ?before=, ?after=, ?beforeKey=, ?q= or ?state=",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "404": {
      "description": "no loaded job of that identifier",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    },
    "parameters": [
     {
      "$ref": "#/components/parameters/JobID"
     },
     {
      "name": "before",
      "in": "query",
      "required": false,
      "description": "older runs: those with an id below this",
      "schema": {
       "type": "integer",
       "minimum": 1
      }
     },
     {
      "name": "after",
      "in": "query",
      "required": false,
      "description": "a template's next page of instances: after this key (template.page.next)",
      "schema": {
       "type": "string",
       "minLength": 1,
       "maxLength": 128
      }
     },
     {
      "name": "beforeKey",
      "in": "query",
      "required": false,
      "description": "a template's previous page of instances: before this key (template.page.previous); not with after",
      "schema": {
       "type": "string",
       "minLength": 1,
       "maxLength": 128
      }
     },
     {"$ref": "#/components/parameters/InstanceText"},
     {"$ref": "#/components/parameters/SearchState"}
    ]
   }
  },
  "/api/runs": {
   "get": {
    "summary": "Search the runs: a page of those a search finds, newest start first, with their kept output and the page's position",
    "parameters": [
     {"name": "job", "in": "query", "required": false, "description": "one job's or instance's runs (its identifier, exactly)", "schema": {"type": "string", "maxLength": 512}},
     {"name": "outcome", "in": "query", "required": false, "description": "how they ended: an outcome, failed (every outcome but success) or running (no end yet)", "schema": {"type": "string", "enum": ["", "success", "failure", "expired", "crashed", "interrupted", "failed", "running"]}},
     {"name": "since", "in": "query", "required": false, "description": "started at or after this time (ISO 8601; UTC without an offset)", "schema": {"type": "string", "maxLength": 64}},
     {"name": "until", "in": "query", "required": false, "description": "started before this time (ISO 8601; UTC without an offset)", "schema": {"type": "string", "maxLength": 64}},
     {"name": "after", "in": "query", "required": false, "description": "the next (older) page: after this cursor (page.next, STARTED_RUNID)", "schema": {"type": "string", "minLength": 1, "maxLength": 512}},
     {"name": "before", "in": "query", "required": false, "description": "the previous (newer) page: before this cursor (page.previous); not with after", "schema": {"type": "string", "minLength": 1, "maxLength": 512}}
    ],
    "responses": {
     "200": {
      "description": "A page of the runs found",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Runs"
        }
       }
      }
     },
     "400": {
      "description": "a bad ?outcome=, ?since=, ?until=, or cursor",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/Busy"
     }
    }
   }
  },
  "/api/widgets": {
   "get": {
    "summary": "The widgets page's facts",
    "responses": {
     "200": {
      "description": "The widgets page's facts",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Widgets"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/Busy"
     }
    }
   }
  },
  "/api/activities": {
   "get": {
    "summary": "The activities page's facts",
    "responses": {
     "200": {
      "description": "The activities page's facts",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Activities"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/Busy"
     }
    }
   }
  },
  "/api/cluster": {
   "get": {
    "summary": "The cluster page's facts, on a cluster node (run --store): every shard's lease from the database, the nodes that lead, and this node's latest lease events",
    "responses": {
     "200": {
      "description": "The cluster page's facts",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Cluster"
        }
       }
      }
     },
     "404": {
      "description": "refreshd runs on one machine (no --store): there is no cluster",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/Busy"
     }
    }
   }
  },
  "/api/simulate": {
   "get": {
    "summary": "`refreshd simulate` of the jobs folder refreshd runs from (bounded: at most 31 days, 10 s, one at a time)",
    "responses": {
     "200": {
      "description": "`refreshd simulate` of the jobs folder refreshd runs from (bounded: at most 31 days, 10 s, one at a time)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Simulate"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/Busy"
     },
     "400": {
      "description": "days, start or seed out of range, or the jobs folder has errors",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     }
    },
    "parameters": [
     {
      "name": "days",
      "in": "query",
      "required": true,
      "schema": {
       "type": "integer",
       "minimum": 1,
       "maximum": 31
      }
     },
     {
      "name": "start",
      "in": "query",
      "required": false,
      "description": "the first simulated instant (default: the coming midnight)",
      "schema": {
       "type": "string",
       "format": "date-time"
      }
     },
     {
      "name": "seed",
      "in": "query",
      "required": false,
      "schema": {
       "type": "integer",
       "minimum": 0,
       "maximum": 18446744073709551615
      }
     }
    ]
   }
  },
  "/api/events": {
   "get": {
    "summary": "Server-sent events: one `observation` event per runtime observation (the `watch --json` object)",
    "responses": {
     "200": {
      "description": "an endless event stream",
      "content": {
       "text/event-stream": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "503": {
      "description": "too many streams are open (at most 64)",
      "content": {
       "text/plain": {
        "schema": {
         "type": "string"
        }
       }
      }
     }
    }
   }
  },
  "/api/openapi.json": {
   "get": {
    "summary": "This document",
    "responses": {
     "200": {
      "description": "the OpenAPI document",
      "content": {
       "application/json": {
        "schema": {
         "type": "object"
        }
       }
      }
     }
    }
   }
  },
  "/api/jobs/{id}/run": {
   "post": {
    "summary": "Run now: submit the job's request for now (`ctl submit`)",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/JobID"
     }
    ],
    "responses": {
     "200": {
      "$ref": "#/components/responses/Done"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/NoToken"
     },
     "403": {
      "$ref": "#/components/responses/WrongToken"
     },
     "404": {
      "$ref": "#/components/responses/NotFound"
     },
     "409": {
      "$ref": "#/components/responses/Refused"
     },
     "503": {
      "$ref": "#/components/responses/NotSaved"
     }
    }
   }
  },
  "/api/jobs/{id}/cancel": {
   "post": {
    "summary": "Cancel the job's pending request",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/JobID"
     }
    ],
    "responses": {
     "200": {
      "$ref": "#/components/responses/Done"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/NoToken"
     },
     "403": {
      "$ref": "#/components/responses/WrongToken"
     },
     "404": {
      "$ref": "#/components/responses/NotFound"
     },
     "409": {
      "$ref": "#/components/responses/Refused"
     },
     "503": {
      "$ref": "#/components/responses/NotSaved"
     }
    }
   }
  },
  "/api/jobs/{id}/pause": {
   "post": {
    "summary": "Pause the job, instance or template: it keeps its pending request and launches nothing until resumed (kept across restarts)",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/JobID"
     }
    ],
    "responses": {
     "200": {
      "$ref": "#/components/responses/Done"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/NoToken"
     },
     "403": {
      "$ref": "#/components/responses/WrongToken"
     },
     "404": {
      "$ref": "#/components/responses/NotFound"
     },
     "409": {
      "$ref": "#/components/responses/Refused"
     },
     "503": {
      "$ref": "#/components/responses/NotSaved"
     }
    }
   }
  },
  "/api/jobs/{id}/resume": {
   "post": {
    "summary": "Resume a paused job, instance or template: slots it missed follow its missed policy, as after downtime",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/JobID"
     }
    ],
    "responses": {
     "200": {
      "$ref": "#/components/responses/Done"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/NoToken"
     },
     "403": {
      "$ref": "#/components/responses/WrongToken"
     },
     "404": {
      "$ref": "#/components/responses/NotFound"
     },
     "409": {
      "$ref": "#/components/responses/Refused"
     },
     "503": {
      "$ref": "#/components/responses/NotSaved"
     }
    }
   }
  },
  "/api/jobs/{id}/expire": {
   "post": {
    "summary": "Expire the job's running run",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/JobID"
     }
    ],
    "responses": {
     "200": {
      "$ref": "#/components/responses/Done"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/NoToken"
     },
     "403": {
      "$ref": "#/components/responses/WrongToken"
     },
     "404": {
      "$ref": "#/components/responses/NotFound"
     },
     "409": {
      "$ref": "#/components/responses/Refused"
     },
     "503": {
      "$ref": "#/components/responses/NotSaved"
     }
    }
   }
  },
  "/api/jobs/{id}/instances": {
   "get": {
    "summary": "Search a template's instances: a page of those found, in identifier order, with its position (the template page's list alone, without the page's other facts)",
    "parameters": [
     {"$ref": "#/components/parameters/TemplateID"},
     {"$ref": "#/components/parameters/InstanceText"},
     {"$ref": "#/components/parameters/SearchState"},
     {"name": "after", "in": "query", "required": false, "description": "the next page: after this key (page.next)", "schema": {"type": "string", "minLength": 1, "maxLength": 128}},
     {"name": "beforeKey", "in": "query", "required": false, "description": "the previous page: before this key (page.previous); not with after", "schema": {"type": "string", "minLength": 1, "maxLength": 128}}
    ],
    "responses": {
     "200": {"description": "A page of the instances found", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/InstancesPage"}}}},
     "400": {"description": "a bad ?q=, ?state=, or cursor", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
     "404": {"description": "no loaded template of that identifier", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
     "503": {"$ref": "#/components/responses/Busy"}
    }
   },
   "post": {
    "summary": "Add an instance of a template (`ctl instance add`); other query parameters are its values by name",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/TemplateID"
     },
     {
      "name": "key",
      "in": "query",
      "required": true,
      "schema": {
       "type": "string",
       "minLength": 1,
       "maxLength": 128
      }
     }
    ],
    "responses": {
     "200": {
      "$ref": "#/components/responses/Done"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/NoToken"
     },
     "403": {
      "$ref": "#/components/responses/WrongToken"
     },
     "404": {
      "$ref": "#/components/responses/NotFound"
     },
     "409": {
      "$ref": "#/components/responses/Refused"
     },
     "503": {
      "$ref": "#/components/responses/NotSaved"
     }
    }
   }
  },
  "/api/jobs/{id}/instances/{key}/remove": {
   "post": {
    "summary": "Remove an instance of a template (`ctl instance remove`)",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/TemplateID"
     },
     {
      "name": "key",
      "in": "path",
      "required": true,
      "description": "the instance's key",
      "schema": {
       "type": "string",
       "minLength": 1,
       "maxLength": 512
      }
     }
    ],
    "responses": {
     "200": {
      "$ref": "#/components/responses/Done"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/NoToken"
     },
     "403": {
      "$ref": "#/components/responses/WrongToken"
     },
     "404": {
      "$ref": "#/components/responses/NotFound"
     },
     "409": {
      "$ref": "#/components/responses/Refused"
     },
     "503": {
      "$ref": "#/components/responses/NotSaved"
     }
    }
   }
  },
  "/api/widgets/{kind}/reload": {
   "post": {
    "summary": "Reload a widget kind's timeline",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "name": "kind",
      "in": "path",
      "required": true,
      "description": "a widget kind",
      "schema": {
       "type": "string",
       "minLength": 1,
       "maxLength": 512
      }
     }
    ],
    "responses": {
     "200": {
      "$ref": "#/components/responses/Done"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/NoToken"
     },
     "403": {
      "$ref": "#/components/responses/WrongToken"
     },
     "404": {
      "$ref": "#/components/responses/NotFound"
     },
     "409": {
      "$ref": "#/components/responses/Refused"
     },
     "503": {
      "$ref": "#/components/responses/NotSaved"
     }
    }
   }
  },
  "/api/activities/{id}/end": {
   "post": {
    "summary": "End a live activity",
    "security": [
     {
      "bearer": []
     }
    ],
    "parameters": [
     {
      "name": "id",
      "in": "path",
      "required": true,
      "description": "an activity's id",
      "schema": {
       "type": "string",
       "minLength": 1,
       "maxLength": 512
      }
     }
    ],
    "responses": {
     "200": {
      "$ref": "#/components/responses/Done"
     },
     "400": {
      "$ref": "#/components/responses/BadRequest"
     },
     "401": {
      "$ref": "#/components/responses/NoToken"
     },
     "403": {
      "$ref": "#/components/responses/WrongToken"
     },
     "404": {
      "$ref": "#/components/responses/NotFound"
     },
     "409": {
      "$ref": "#/components/responses/Refused"
     },
     "503": {
      "$ref": "#/components/responses/NotSaved"
     }
    }
   }
  },
  "/healthz": {
   "get": {
    "summary": "Liveness",
    "responses": {
     "200": {
      "description": "running",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Health"
        }
       }
      }
     },
     "503": {
      "description": "stopping",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Health"
        }
       }
      }
     }
    }
   }
  },
  "/metrics": {
   "get": {
    "summary": "Prometheus text (the control socket's `metrics`)",
    "responses": {
     "200": {
      "description": "metrics",
      "content": {
       "text/plain": {
        "schema": {
         "type": "string"
        }
       }
      }
     }
    }
   }
  }
 },
 "components": {
  "schemas": {
   "Instant": {
    "type": "string",
    "format": "date-time",
    "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,3})?Z$",
    "description": "ISO 8601 UTC with milliseconds, e.g. 2026-11-26T10:04:05.123Z"
   },
   "Error": {
    "type": "object",
    "properties": {
     "v": {
      "type": "integer"
     },
     "ok": {
      "const": false
     },
     "error": {
      "type": "object",
      "properties": {
       "code": {
        "type": "string"
       },
       "message": {
        "type": "string"
       }
      },
      "required": [
       "code",
       "message"
      ]
     }
    },
    "required": [
     "ok",
     "error"
    ]
   },
   "ControlReply": {
    "type": "object",
    "properties": {
     "v": {
      "type": "integer"
     },
     "id": {
      "type": "integer"
     },
     "ok": {
      "type": "boolean"
     },
     "now": {
      "$ref": "#/components/schemas/Instant"
     },
     "message": {
      "type": "string"
     },
     "error": {
      "type": "object",
      "properties": {
       "code": {
        "type": "string"
       },
       "message": {
        "type": "string"
       }
      },
      "required": [
       "code",
       "message"
      ]
     },
     "instances": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/InstanceRecord"
      }
     },
     "nextAfter": {
      "type": "string"
     }
    },
    "required": [
     "ok"
    ]
   },
   "InstanceCounts": {
    "description": "A template's instances counted by state, by the store on its indexes (a timeline template's providers' state is their instance's).",
    "type": "object",
    "properties": {
     "count": {"type": "integer", "minimum": 0},
     "pending": {"type": "integer", "minimum": 0},
     "running": {"type": "integer", "minimum": 0},
     "failing": {"type": "integer", "minimum": 0},
     "paused": {"type": "integer", "minimum": 0}
    },
    "required": ["count", "pending", "running", "failing", "paused"],
    "additionalProperties": false
   },
   "TemplateRow": {
    "type": "object",
    "properties": {
     "identifier": {"type": "string"},
     "instances": {"$ref": "#/components/schemas/InstanceCounts"},
     "longestStreak": {"type": "integer", "minimum": 0}
    },
    "required": ["identifier", "instances", "longestStreak"],
    "additionalProperties": false
   },
   "InstanceRow": {
    "description": "An instance in its template's list, with its state (and its widget providers').",
    "type": "object",
    "properties": {
     "template": {"type": "string"},
     "key": {"type": "string"},
     "values": {"type": "object", "additionalProperties": {"type": "string"}},
     "next": {"$ref": "#/components/schemas/Instant"},
     "running": {"type": "integer"},
     "retryStreak": {"type": "integer", "minimum": 0},
     "paused": {"type": "boolean"},
     "lastRun": {"$ref": "#/components/schemas/Run"}
    },
    "required": ["template", "key", "values", "retryStreak", "paused"],
    "additionalProperties": false
   },
   "InstanceRecord": {
    "type": "object",
    "properties": {
     "template": {
      "type": "string"
     },
     "key": {
      "type": "string"
     },
     "values": {
      "type": "object",
      "additionalProperties": {
       "type": "string"
      }
     }
    },
    "required": [
     "template",
     "key",
     "values"
    ]
   },
   "Pending": {
    "type": "object",
    "properties": {
     "identifier": {
      "type": "string"
     },
     "namespace": {
      "type": "string"
     },
     "kind": {
      "type": "string",
      "enum": [
       "app-refresh",
       "processing",
       "timeline"
      ]
     },
     "earliest": {
      "$ref": "#/components/schemas/Instant"
     },
     "submitted": {
      "$ref": "#/components/schemas/Instant"
     },
     "sequence": {
      "type": "integer"
     },
     "origin": {
      "type": "string"
     },
     "requiresExternalPower": {
      "type": "boolean"
     },
     "requiresNetworkConnectivity": {
      "type": "boolean"
     },
     "wake": {
      "$ref": "#/components/schemas/Instant"
     },
     "place": {
      "type": "string",
      "enum": [
       "queued",
       "waitingOnConditions",
       "blockedByRun",
       "held",
       "paused"
      ]
     },
     "heldUntil": {
      "$ref": "#/components/schemas/Instant"
     }
    },
    "required": [
     "identifier",
     "namespace",
     "kind",
     "earliest",
     "submitted"
    ]
   },
   "RunningRun": {
    "type": "object",
    "properties": {
     "runID": {
      "type": "integer"
     },
     "identifier": {
      "type": "string"
     },
     "kind": {
      "type": "string",
      "enum": [
       "app-refresh",
       "processing",
       "timeline"
      ]
     },
     "started": {
      "$ref": "#/components/schemas/Instant"
     },
     "deadline": {
      "$ref": "#/components/schemas/Instant"
     },
     "attempt": {
      "type": "integer"
     },
     "phase": {
      "type": "object"
     },
     "stoppedByShutdown": {
      "type": "boolean"
     }
    },
    "required": [
     "runID",
     "identifier",
     "kind",
     "started",
     "deadline",
     "attempt"
    ]
   },
   "Run": {
    "type": "object",
    "properties": {
     "runID": {
      "type": "integer"
     },
     "identifier": {
      "type": "string"
     },
     "kind": {
      "type": "string",
      "enum": [
       "app-refresh",
       "processing",
       "timeline"
      ]
     },
     "submitted": {
      "$ref": "#/components/schemas/Instant"
     },
     "earliest": {
      "$ref": "#/components/schemas/Instant"
     },
     "started": {
      "$ref": "#/components/schemas/Instant"
     },
     "deadline": {
      "$ref": "#/components/schemas/Instant"
     },
     "attempt": {
      "type": "integer"
     },
     "outcome": {
      "type": "string",
      "enum": [
       "success",
       "failure",
       "expired",
       "crashed",
       "interrupted",
       "running"
      ]
     },
     "ended": {
      "$ref": "#/components/schemas/Instant"
     },
     "exitStatus": {
      "type": "integer"
     },
     "signal": {
      "type": "integer"
     },
     "reason": {
      "type": "string"
     },
     "cpuMicroseconds": {
      "type": "integer"
     },
     "peakMemoryBytes": {
      "type": "integer"
     },
     "output": {
      "description": "The last lines the run printed (stdout and stderr, as logged), as the store keeps them with the run: at most refreshd run --keep-output lines (default 200, at most 2000) and 64 KiB.",
      "type": "array",
      "items": {
       "type": "string"
      },
      "maxItems": 2000
     },
     "outputEarlier": {
      "description": "Lines printed before the kept output, not kept.",
      "type": "integer",
      "minimum": 1
     },
     "results": {
      "description": "The run's accepted results lines (compact JSON).",
      "type": "array",
      "items": {
       "type": "string"
      },
      "maxItems": 64
     },
     "outputOmitted": {
      "description": "True when a long page of runs left this run's kept output out (ask a smaller page).",
      "type": "boolean"
     }
    },
    "required": [
     "runID",
     "identifier",
     "kind",
     "earliest",
     "started",
     "deadline",
     "attempt",
     "outcome"
    ]
   },
   "FailingJob": {
    "type": "object",
    "properties": {
     "identifier": {
      "type": "string"
     },
     "lastOutcome": {
      "type": "string",
      "enum": [
       "success",
       "failure",
       "expired",
       "crashed",
       "interrupted",
       "running"
      ]
     },
     "lastRunID": {
      "type": "integer"
     },
     "retryStreak": {
      "type": "integer",
      "minimum": 0
     }
    },
    "required": [
     "identifier",
     "lastOutcome",
     "lastRunID",
     "retryStreak"
    ],
    "additionalProperties": false
   },
   "Violation": {
    "type": "object",
    "properties": {
     "invariant": {
      "type": "string"
     },
     "identifier": {
      "type": "string"
     },
     "runID": {
      "type": "integer"
     },
     "detail": {
      "type": "string"
     }
    },
    "required": [
     "invariant",
     "detail"
    ]
   },
   "TimelineEntry": {
    "type": "object",
    "properties": {
     "date": {
      "$ref": "#/components/schemas/Instant"
     },
     "content": {
      "type": "string"
     },
     "relevance": {
      "type": "number"
     },
     "durationMilliseconds": {
      "type": "integer"
     }
    },
    "required": [
     "date",
     "content"
    ]
   },
   "Widget": {
    "type": "object",
    "properties": {
     "kind": {
      "type": "string"
     },
     "family": {
      "type": "string"
     },
     "job": {
      "type": "string"
     },
     "shown": {
      "$ref": "#/components/schemas/TimelineEntry"
     },
     "shownSince": {
      "$ref": "#/components/schemas/Instant"
     },
     "nextEntrySwitch": {
      "$ref": "#/components/schemas/Instant"
     },
     "entries": {
      "type": "integer"
     },
     "nextReload": {
      "$ref": "#/components/schemas/Instant"
     },
     "nextReloadWhy": {
      "type": "string"
     },
     "budgetLimit": {
      "type": "integer"
     },
     "budgetUsed": {
      "type": "integer"
     },
     "budgetLeft": {
      "type": "integer"
     },
     "windowSeconds": {
      "type": "integer"
     },
     "staleSince": {
      "$ref": "#/components/schemas/Instant"
     },
     "staleReason": {
      "type": "string"
     },
     "staleSpans": {
      "type": "array",
      "items": {
       "type": "object"
      }
     },
     "lastSuccess": {
      "$ref": "#/components/schemas/Instant"
     },
     "lastFailure": {
      "type": "string"
     }
    },
    "required": [
     "kind",
     "family",
     "job",
     "entries",
     "nextReloadWhy",
     "windowSeconds",
     "staleSpans"
    ]
   },
   "Activity": {
    "type": "object",
    "properties": {
     "id": {
      "type": "string"
     },
     "type": {
      "type": "string"
     },
     "owner": {
      "type": "string"
     },
     "namespace": {
      "type": "string"
     },
     "state": {
      "type": "string"
     },
     "since": {
      "$ref": "#/components/schemas/Instant"
     },
     "start": {
      "$ref": "#/components/schemas/Instant"
     },
     "progressPercent": {
      "type": "number"
     },
     "staleDate": {
      "$ref": "#/components/schemas/Instant"
     },
     "endsBy": {
      "$ref": "#/components/schemas/Instant"
     },
     "dismissal": {
      "$ref": "#/components/schemas/Instant"
     },
     "budgetUsed": {
      "type": "integer"
     },
     "budget": {
      "type": "integer"
     },
     "held": {
      "type": "object"
     },
     "updatesApplied": {
      "type": "integer"
     },
     "updatesIgnored": {
      "type": "integer"
     },
     "nextDeadline": {
      "$ref": "#/components/schemas/Instant"
     },
     "nextDeadlineKind": {
      "type": "string"
     }
    },
    "required": [
     "id",
     "type",
     "namespace",
     "state",
     "since",
     "start",
     "budgetUsed",
     "budget",
     "updatesApplied",
     "updatesIgnored"
    ]
   },
   "ActivitySnapshot": {
    "type": "object",
    "properties": {
     "activities": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Activity"
      }
     },
     "recentlyDismissed": {
      "type": "array",
      "items": {
       "type": "object"
      }
     },
     "at": {
      "$ref": "#/components/schemas/Instant"
     }
    },
    "required": [
     "activities",
     "recentlyDismissed"
    ]
   },
   "Why": {
    "type": "object",
    "properties": {
     "identifier": {
      "type": "string"
     },
     "subject": {
      "type": "string",
      "enum": [
       "job",
       "timeline",
       "provider",
       "activity",
       "unknown"
      ]
     },
     "live": {
      "type": "boolean"
     },
     "reasons": {
      "type": "array",
      "items": {
       "type": "string"
      }
     },
     "paragraph": {
      "type": "string"
     }
    },
    "required": [
     "identifier",
     "subject",
     "live",
     "reasons",
     "paragraph"
    ]
   },
   "JobRow": {
    "type": "object",
    "properties": {
     "identifier": {
      "type": "string"
     },
     "kind": {
      "type": "string",
      "enum": [
       "app-refresh",
       "processing",
       "timeline"
      ]
     },
     "kindName": {
      "description": "The kind as the job file names it: a timeline job (a widget's) is `timeline`.",
      "type": "string",
      "enum": [
       "app-refresh",
       "processing",
       "timeline"
      ]
     },
     "instances": {
      "description": "A template's instances, counted by the store (a template itself never runs).",
      "$ref": "#/components/schemas/InstanceCounts"
     },
     "schedule": {
      "type": "string"
     },
     "next": {
      "$ref": "#/components/schemas/Instant"
     },
     "nextPlace": {
      "type": "string"
     },
     "paused": {
      "description": "The pause that holds it (its own, or its template's: `identifier`) and since when; absent when it is not paused.",
      "type": "object",
      "properties": {
       "identifier": {"type": "string"},
       "since": {"$ref": "#/components/schemas/Instant"}
      },
      "required": ["identifier", "since"],
      "additionalProperties": false
     },
     "running": {
      "$ref": "#/components/schemas/RunningRun"
     },
     "lastRun": {
      "$ref": "#/components/schemas/Run"
     },
     "retryStreak": {
      "type": "integer",
      "minimum": 0
     },
     "unmet": {
      "type": "array",
      "items": {
       "type": "string",
       "enum": [
        "external power",
        "network"
       ]
      }
     },
     "why": {
      "$ref": "#/components/schemas/Why"
     }
    },
    "required": [
     "identifier",
     "kind",
     "kindName",
     "schedule",
     "retryStreak",
     "unmet",
     "why"
    ],
    "additionalProperties": false
   },
   "NotificationCounts": {
    "type": "object",
    "properties": {
     "failure": {
      "type": "integer",
      "minimum": 0
     },
     "recovery": {
      "type": "integer",
      "minimum": 0
     },
     "delivered": {
      "type": "integer",
      "minimum": 0
     },
     "retries": {
      "type": "integer",
      "minimum": 0
     },
     "givenUp": {
      "type": "integer",
      "minimum": 0
     },
     "dropped": {
      "type": "integer",
      "minimum": 0
     }
    },
    "required": [
     "failure",
     "recovery",
     "delivered",
     "retries",
     "givenUp",
     "dropped"
    ]
   },
   "HeldNotification": {
    "type": "object",
    "properties": {
     "id": {
      "type": "string"
     },
     "kind": {
      "enum": [
       "failure",
       "recovery"
      ]
     },
     "job": {
      "type": "string"
     },
     "runID": {
      "type": "integer"
     },
     "outcome": {
      "type": "string",
      "enum": [
       "success",
       "failure",
       "expired",
       "crashed",
       "interrupted",
       "running"
      ]
     },
     "notifier": {
      "type": "string"
     },
     "attempts": {
      "type": "integer",
      "minimum": 0
     },
     "lastFailure": {
      "type": "string"
     },
     "nextAttempt": {
      "$ref": "#/components/schemas/Instant"
     }
    },
    "required": [
     "id",
     "kind",
     "job",
     "runID",
     "outcome",
     "notifier",
     "attempts"
    ],
    "additionalProperties": false
   },
   "GoneNotification": {
    "type": "object",
    "properties": {
     "time": {
      "$ref": "#/components/schemas/Instant"
     },
     "kind": {
      "enum": [
       "notification-given-up",
       "notification-dropped"
      ]
     },
     "job": {
      "type": "string"
     },
     "runID": {
      "type": "integer"
     },
     "attempts": {
      "type": "integer"
     },
     "message": {
      "type": "string"
     }
    },
    "required": [
     "time",
     "kind",
     "job",
     "message"
    ],
    "additionalProperties": false
   },
   "Notifications": {
    "type": "object",
    "properties": {
     "counts": {
      "$ref": "#/components/schemas/NotificationCounts"
     },
     "held": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/HeldNotification"
      }
     },
     "givenUp": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/GoneNotification"
      }
     }
    },
    "required": [
     "counts",
     "held",
     "givenUp"
    ],
    "additionalProperties": false
   },
   "Overview": {
    "type": "object",
    "properties": {
     "now": {
      "$ref": "#/components/schemas/Instant"
     },
     "last24h": {
      "type": "object",
      "additionalProperties": {
       "type": "integer",
       "minimum": 0
      }
     },
     "runsLast24h": {
      "type": "integer",
      "minimum": 0
     },
     "truncated": {
      "type": "boolean"
     },
     "running": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/RunningRun"
      }
     },
     "failing": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/FailingJob"
      }
     },
     "templates": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/TemplateRow"
      }
     },
     "next": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Pending"
      },
      "maxItems": 10
     },
     "staleWidgets": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Widget"
      }
     },
     "liveActivities": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Activity"
      }
     },
     "recentRuns": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Run"
      },
      "maxItems": 10
     },
     "violations": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Violation"
      }
     },
     "notifications": {
      "$ref": "#/components/schemas/Notifications"
     }
    },
    "required": [
     "now",
     "last24h",
     "runsLast24h",
     "truncated",
     "running",
     "failing",
     "templates",
     "next",
     "staleWidgets",
     "liveActivities",
     "recentRuns",
     "violations",
     "notifications"
    ],
    "additionalProperties": false
   },
   "FailureRow": {
    "type": "object",
    "properties": {
     "identifier": {"type": "string"},
     "retryStreak": {"type": "integer", "minimum": 1},
     "next": {"$ref": "#/components/schemas/Instant"},
     "lastRun": {"$ref": "#/components/schemas/Run"},
     "paused": {
      "type": "object",
      "properties": {
       "identifier": {"type": "string"},
       "since": {"$ref": "#/components/schemas/Instant"}
      },
      "required": ["identifier", "since"],
      "additionalProperties": false
     }
    },
    "required": ["identifier", "retryStreak"],
    "additionalProperties": false
   },
   "Failures": {
    "type": "object",
    "properties": {
     "now": {"$ref": "#/components/schemas/Instant"},
     "retrying": {"description": "Failing with a retry still to come; `next` is the next attempt.", "type": "array", "items": {"$ref": "#/components/schemas/FailureRow"}},
     "exhausted": {"description": "Failing with every retry used (or no retry policy); `next` is a regular next run, if any.", "type": "array", "items": {"$ref": "#/components/schemas/FailureRow"}},
     "more": {"description": "Failing identifiers not listed: beyond the 500 rows of each list, and each template's failing instances past its first 50.", "type": "integer", "minimum": 0},
     "templates": {"description": "One row a template with failing instances: its instances counted by state, and how many of its failing ones (the first by key) `retrying` and `exhausted` list.", "type": "array", "items": {"$ref": "#/components/schemas/FailingTemplate"}},
     "expiredOrCrashed": {"description": "Runs of the last 24 h that expired or crashed, newest first, at most 100.", "type": "array", "items": {"$ref": "#/components/schemas/Run"}},
     "notifications": {"$ref": "#/components/schemas/Notifications"},
     "actionsEnabled": {"type": "boolean"}
    },
    "required": ["now", "retrying", "exhausted", "more", "templates", "expiredOrCrashed", "notifications", "actionsEnabled"],
    "additionalProperties": false
   },
   "FailingTemplate": {
    "type": "object",
    "properties": {
     "identifier": {"type": "string"},
     "instances": {"$ref": "#/components/schemas/InstanceCounts"},
     "listed": {"type": "integer", "minimum": 0}
    },
    "required": ["identifier", "instances", "listed"],
    "additionalProperties": false
   },
   "Jobs": {
    "type": "object",
    "properties": {
     "now": {
      "$ref": "#/components/schemas/Instant"
     },
     "jobs": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/JobRow"
      },
      "maxItems": 100
     },
     "search": {"$ref": "#/components/schemas/SearchQuery"},
     "page": {"$ref": "#/components/schemas/PageInfo"}
    },
    "required": [
     "now",
     "jobs",
     "search",
     "page"
    ],
    "additionalProperties": false
   },
   "RunRow": {
    "type": "object",
    "properties": {
     "run": {
      "$ref": "#/components/schemas/Run"
     },
     "durationMilliseconds": {
      "type": "integer"
     },
     "allowanceMilliseconds": {
      "type": "integer"
     }
    },
    "required": [
     "run",
     "allowanceMilliseconds"
    ],
    "additionalProperties": false
   },
   "SearchQuery": {
    "type": "object",
    "description": "What the search asked: the text and the state (none: any)",
    "properties": {
     "q": {"type": "string"},
     "state": {"type": "string", "enum": ["pending", "running", "failing", "paused"]}
    },
    "required": ["q"],
    "additionalProperties": false
   },
   "PageInfo": {
    "type": "object",
    "description": "Where the page stands: results first to last (1-based; 0 and 0 when none) of total, and the cursors of the pages beside it (absent: none that way)",
    "properties": {
     "first": {"type": "integer", "minimum": 0},
     "last": {"type": "integer", "minimum": 0},
     "total": {"type": "integer", "minimum": 0},
     "previous": {"type": "string"},
     "next": {"type": "string"}
    },
    "required": ["first", "last", "total"],
    "additionalProperties": false
   },
   "InstancesPage": {
    "type": "object",
    "properties": {
     "template": {"type": "string"},
     "search": {"$ref": "#/components/schemas/SearchQuery"},
     "instances": {"type": "array", "items": {"$ref": "#/components/schemas/InstanceRecord"}, "maxItems": 50},
     "page": {"$ref": "#/components/schemas/PageInfo"}
    },
    "required": ["template", "search", "instances", "page"],
    "additionalProperties": false
   },
   "Runs": {
    "type": "object",
    "properties": {
     "now": {"$ref": "#/components/schemas/Instant"},
     "job": {"type": "string"},
     "outcome": {"type": "string"},
     "since": {"$ref": "#/components/schemas/Instant"},
     "until": {"$ref": "#/components/schemas/Instant"},
     "runs": {"type": "array", "items": {"$ref": "#/components/schemas/RunRow"}, "maxItems": 50},
     "page": {"$ref": "#/components/schemas/PageInfo"}
    },
    "required": ["now", "runs", "page"],
    "additionalProperties": false
   },
   "Template": {
    "type": "object",
    "properties": {
     "parameters": {
      "type": "array",
      "items": {
       "type": "string"
      }
     },
     "count": {
      "type": "integer",
      "minimum": 0
     },
     "counts": {"$ref": "#/components/schemas/InstanceCounts"},
     "failing": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/FailingJob"
      },
      "maxItems": 50
     },
     "failingMore": {
      "type": "boolean"
     },
     "instances": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/InstanceRow"
      },
      "maxItems": 50
     },
     "nextAfter": {
      "type": "string"
     },
     "search": {"$ref": "#/components/schemas/SearchQuery"},
     "page": {"$ref": "#/components/schemas/PageInfo"}
    },
    "required": [
     "parameters",
     "count",
     "counts",
     "failing",
     "failingMore",
     "instances",
     "search",
     "page"
    ],
    "additionalProperties": false
   },
   "Job": {
    "type": "object",
    "properties": {
     "now": {
      "$ref": "#/components/schemas/Instant"
     },
     "job": {
      "$ref": "#/components/schemas/JobRow"
     },
     "command": {
      "type": "array",
      "items": {
       "type": "string"
      }
     },
     "action": {
      "type": "string"
     },
     "allowanceMilliseconds": {
      "type": "integer"
     },
     "runs": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/RunRow"
      },
      "maxItems": 20
     },
     "nextBefore": {
      "type": "integer",
      "minimum": 1
     },
     "nextSlots": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Instant"
      },
      "maxItems": 10
     },
     "actionsEnabled": {
      "type": "boolean"
     },
     "notifications": {
      "$ref": "#/components/schemas/Notifications"
     },
     "template": {
      "$ref": "#/components/schemas/Template"
     },
     "instanceOf": {
      "type": "string"
     }
    },
    "required": [
     "now",
     "job",
     "allowanceMilliseconds",
     "runs",
     "nextSlots",
     "actionsEnabled",
     "notifications"
    ],
    "additionalProperties": false
   },
   "WidgetRow": {
    "type": "object",
    "properties": {
     "widget": {
      "$ref": "#/components/schemas/Widget"
     },
     "rendition": {
      "type": "string"
     },
     "entries": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/TimelineEntry"
      }
     },
     "ledger": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/Instant"
      }
     }
    },
    "required": [
     "widget",
     "entries",
     "ledger"
    ],
    "additionalProperties": false
   },
   "Widgets": {
    "type": "object",
    "properties": {
     "now": {
      "$ref": "#/components/schemas/Instant"
     },
     "widgets": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/WidgetRow"
      }
     },
     "actionsEnabled": {
      "type": "boolean"
     }
    },
    "required": [
     "now",
     "widgets",
     "actionsEnabled"
    ],
    "additionalProperties": false
   },
   "Activities": {
    "type": "object",
    "properties": {
     "now": {
      "$ref": "#/components/schemas/Instant"
     },
     "activities": {
      "$ref": "#/components/schemas/ActivitySnapshot"
     },
     "actionsEnabled": {
      "type": "boolean"
     }
    },
    "required": [
     "now",
     "activities",
     "actionsEnabled"
    ],
    "additionalProperties": false
   },
   "Cluster": {
    "type": "object",
    "properties": {
     "now": {
      "$ref": "#/components/schemas/Instant"
     },
     "cluster": {
      "type": "object",
      "properties": {
       "node": {
        "type": "string",
        "description": "the node that answered"
       },
       "databaseNow": {
        "$ref": "#/components/schemas/Instant"
       },
       "shards": {
        "type": "array",
        "items": {
         "type": "object",
         "properties": {
          "shard": {
           "type": "integer"
          },
          "owner": {
           "type": "string",
           "description": "the lease's holder; absent: never held"
          },
          "epoch": {
           "type": "integer"
          },
          "expiresAt": {
           "$ref": "#/components/schemas/Instant"
          },
          "led": {
           "type": "boolean",
           "description": "the lease has not expired at databaseNow"
          },
          "pendingCommands": {
           "type": "integer"
          }
         },
         "required": [
          "shard",
          "epoch",
          "expiresAt",
          "led",
          "pendingCommands"
         ],
         "additionalProperties": false
        }
       }
      },
      "required": [
       "node",
       "databaseNow",
       "shards"
      ],
      "additionalProperties": false
     },
     "nodes": {
      "type": "array",
      "items": {
       "type": "object",
       "properties": {
        "name": {
         "type": "string"
        },
        "shards": {
         "type": "array",
         "items": {
          "type": "integer"
         }
        }
       },
       "required": [
        "name",
        "shards"
       ],
       "additionalProperties": false
      }
     },
     "unled": {
      "type": "array",
      "items": {
       "type": "integer"
      }
     },
     "events": {
      "type": "array",
      "items": {
       "type": "object",
       "properties": {
        "at": {
         "$ref": "#/components/schemas/Instant"
        },
        "line": {
         "type": "string"
        }
       },
       "required": [
        "at",
        "line"
       ],
       "additionalProperties": false
      }
     }
    },
    "required": [
     "now",
     "cluster",
     "nodes",
     "unled",
     "events"
    ],
    "additionalProperties": false
   },
   "Figures": {
    "type": "object",
    "properties": {
     "launched": {
      "type": "integer"
     },
     "success": {
      "type": "integer"
     },
     "failure": {
      "type": "integer"
     },
     "expired": {
      "type": "integer"
     },
     "crashed": {
      "type": "integer"
     },
     "interrupted": {
      "type": "integer"
     },
     "missed": {
      "type": "integer"
     },
     "latenessP50": {
      "type": "integer"
     },
     "latenessMax": {
      "type": "integer"
     }
    },
    "required": [
     "launched",
     "success",
     "failure",
     "expired",
     "crashed",
     "interrupted",
     "missed"
    ]
   },
   "SimulatedViolation": {
    "type": "object",
    "properties": {
     "time": {
      "$ref": "#/components/schemas/Instant"
     },
     "invariant": {
      "type": "string"
     },
     "message": {
      "type": "string"
     },
     "recent": {
      "type": "array",
      "items": {
       "type": "string"
      }
     }
    },
    "required": [
     "time",
     "invariant",
     "message"
    ]
   },
   "Simulate": {
    "type": "object",
    "properties": {
     "jobsFolder": {
      "type": "string"
     },
     "start": {
      "$ref": "#/components/schemas/Instant"
     },
     "days": {
      "type": "integer",
      "minimum": 1,
      "maximum": 31
     },
     "seed": {
      "type": "integer",
      "minimum": 0
     },
     "stopped": {
      "type": "string"
     },
     "elapsedMilliseconds": {
      "type": "integer",
      "minimum": 0
     },
     "steps": {
      "type": "integer",
      "minimum": 0
     },
     "total": {
      "$ref": "#/components/schemas/Figures"
     },
     "violations": {
      "type": "array",
      "items": {
       "$ref": "#/components/schemas/SimulatedViolation"
      }
     },
     "text": {
      "type": "string"
     },
     "svg": {
      "type": "string",
      "pattern": "^<svg"
     },
     "notInFolder": {
      "type": "array",
      "items": {
       "type": "string"
      }
     },
     "notInForce": {
      "type": "array",
      "items": {
       "type": "string"
      }
     }
    },
    "required": [
     "jobsFolder",
     "start",
     "days",
     "seed",
     "elapsedMilliseconds",
     "steps",
     "total",
     "violations",
     "text",
     "svg",
     "notInFolder",
     "notInForce"
    ],
    "additionalProperties": false
   },
   "Health": {
    "type": "object",
    "properties": {
     "ok": {
      "type": "boolean"
     },
     "now": {
      "$ref": "#/components/schemas/Instant"
     },
     "pending": {
      "type": "integer"
     },
     "running": {
      "type": "integer"
     }
    },
    "required": [
     "ok"
    ],
    "additionalProperties": false
   }
  },
  "responses": {
   "Busy": {
    "description": "refreshd's loop did not answer (it is stopping), or too many reads at once",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    }
   },
   "Done": {
    "description": "done: the control socket's reply",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/ControlReply"
      }
     }
    }
   },
   "BadRequest": {
    "description": "the request is malformed (the reply names the field)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/ControlReply"
      }
     }
    }
   },
   "NoToken": {
    "description": "no Authorization: Bearer header",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/ControlReply"
      }
     }
    }
   },
   "WrongToken": {
    "description": "a wrong token, or actions are off (no --http-token-file)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/ControlReply"
      }
     }
    }
   },
   "NotFound": {
    "description": "no such job, widget kind, activity, template or instance",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/ControlReply"
      }
     }
    }
   },
   "Refused": {
    "description": "refused by the scheduler in its current state (the reply says why)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/ControlReply"
      }
     }
    }
   },
   "NotSaved": {
    "description": "not saved (the state could not be committed) or refreshd is stopping",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/ControlReply"
      }
     }
    }
   }
  },
  "parameters": {
   "SearchText": {
    "name": "q",
    "in": "query",
    "required": false,
    "description": "jobs whose identifier holds this text (any case)",
    "schema": {"type": "string", "maxLength": 512}
   },
   "InstanceText": {
    "name": "q",
    "in": "query",
    "required": false,
    "description": "a template's instances whose key holds this text (part of a key: letters, digits, '.', '_', '@', '-')",
    "schema": {"type": "string", "maxLength": 128}
   },
   "SearchState": {
    "name": "state",
    "in": "query",
    "required": false,
    "description": "pending (a pending request), running (a run without an end), failing (a failure streak above zero), paused (itself or its template); empty: any",
    "schema": {"type": "string", "enum": ["", "pending", "running", "failing", "paused"]}
   },
   "JobID": {
    "name": "id",
    "in": "path",
    "required": true,
    "description": "a job's identifier (a template's, or an instance's TEMPLATE[KEY])",
    "schema": {
     "type": "string",
     "minLength": 1,
     "maxLength": 512
    }
   },
   "TemplateID": {
    "name": "id",
    "in": "path",
    "required": true,
    "description": "a template's identifier",
    "schema": {
     "type": "string",
     "minLength": 1,
     "maxLength": 512
    }
   }
  },
  "securitySchemes": {
   "bearer": {
    "type": "http",
    "scheme": "bearer",
    "description": "the first line of refreshd's --http-token-file"
   }
  }
 }
}
"""#
}
