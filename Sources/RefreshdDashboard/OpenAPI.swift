import Foundation
import RefreshdCore
import RefreshdRuntime
import RefreshdSimulation

/// The dashboard's OpenAPI 3.1 document, served at `/api/openapi.json`, from one source each
/// (issue 37, item 5): the paths, parameters, responses and the few shapes no Codable type
/// writes (`Instant`, `Error`, `ControlReply`, `Health`) are `CWebAssets/openapi.json`; every
/// other schema is read off the Codable type that the endpoint encodes (`SchemaDeriver`:
/// properties, JSON types, required-ness, nesting), and the resource only adds to it what a type
/// cannot say: descriptions and bounds (`maxItems`, `minimum`, an `enum` of a `String` field),
/// keyed by schema and field. A field added to a type is in the document at once; a field of the
/// dashboard's own objects without a description, or words naming a field the type lacks, is a
/// problem `OpenAPIDocumentTests` fails on. The tests
/// also check real responses against the document (`api_check.py`: jsonschema, then a bounded
/// schemathesis fuzz).
package enum OpenAPI {
    /// The dashboard's own objects, by component name (the names the paths refer to): every
    /// field of each has its description in the resource.
    static var pages: [(name: String, type: any Codable.Type)] {
        [
            ("Overview", OverviewData.self), ("Failures", FailuresData.self), ("FailureRow", FailureRow.self),
            ("FailingTemplate", FailingTemplate.self), ("FailingJob", FailingJob.self), ("TemplateRow", TemplateRow.self),
            ("Jobs", JobsData.self), ("JobRow", JobRow.self), ("Job", JobData.self), ("RunRow", RunRow.self),
            ("Template", TemplateData.self), ("InstanceRow", InstanceRow.self), ("InstancesPage", InstancesData.self),
            ("Runs", RunsData.self), ("SearchQuery", SearchQuery.self), ("PageInfo", PageInfo.self),
            ("Widgets", WidgetsData.self), ("WidgetRow", WidgetRow.self), ("Activities", ActivitiesData.self),
            ("Cluster", ClusterData.self), ("Simulate", SimulateData.self),
            ("Replay", ReplayData.self), ("ReplayRow", ReplayRow.self), ("ReplayWords", ReplayWords.self),
            ("Notifications", NotificationsData.self), ("HeldNotification", HeldNotification.self),
            ("GoneNotification", NotificationNotices.Notice.self),
        ]
    }

    /// The engine's shapes the pages carry (those of `status --json` and the control socket,
    /// whose fields are told where they are defined): each has a description of its own.
    static var engine: [(name: String, type: any Codable.Type)] {
        [
            ("InstanceCounts", InstanceCounts.self), ("InstanceRecord", InstanceRecord.self),
            ("Pending", SchedulerSnapshot.Pending.self), ("RunningRun", SchedulerSnapshot.Run.self),
            ("Run", StatusReport.Run.self), ("Violation", InvariantViolation.self), ("TimelineEntry", TimelineEntry.self),
            ("Widget", TimelineSnapshot.Widget.self), ("Activity", ActivitySnapshot.Entry.self),
            ("ActivitySnapshot", ActivitySnapshot.self), ("Why", WhyReport.self), ("NotificationCounts", NotificationCounts.self),
            ("Figures", SimulationReport.Figures.self), ("SimulatedViolation", SimulationReport.Violation.self),
            ("ReplayError", ReplayComparison.SimulatorError.self), ("SimulatedFault", SimulationReport.FaultRecord.self),
        ]
    }

    static var models: [(name: String, type: any Codable.Type)] { pages + engine }

    /// The document as served.
    package static let document: String = build().text

    /// The document, what in it does not fit (empty when all is well), and each model's
    /// placeholder value as JSON (what the tests hold the schema against).
    struct Built {
        var text: String
        var problems: [String]
        var samples: [String: Data]
    }

    static func build(pages: [(name: String, type: any Codable.Type)] = pages,
                      engine: [(name: String, type: any Codable.Type)] = engine) -> Built {
        var problems: [String] = []
        var samples: [String: Data] = [:]
        guard var document = (try? JSONSerialization.jsonObject(with: Assets.openAPI)) as? [String: Any],
              var components = document["components"] as? [String: Any],
              var schemas = components["schemas"] as? [String: Any] else {
            return Built(text: "{}", problems: ["CWebAssets/openapi.json is not a JSON object with components.schemas"], samples: [:])
        }
        let models = pages + engine, pageNames = Set(pages.map(\.name))
        let deriver = SchemaDeriver(names: Dictionary(models.map { (ObjectIdentifier($0.type), $0.name) }, uniquingKeysWith: { a, _ in a }))
        for (name, type) in models {
            let annotation = schemas[name] as? [String: Any] ?? [:]
            if annotation["description"] == nil { problems.append("\(name): no description in CWebAssets/openapi.json") }
            do {
                let (schema, sample) = try derived(type, by: deriver)
                let merged = merge(schema, annotation, at: name, problems: &problems)
                if pageNames.contains(name) {
                    for (field, property) in merged["properties"] as? [String: Any] ?? [:]
                    where (property as? [String: Any])?["description"] == nil {
                        problems.append("\(name).\(field): no description in CWebAssets/openapi.json")
                    }
                }
                schemas[name] = merged
                samples[name] = sample
            } catch {
                problems.append("\(name): \(error)")
            }
        }
        let derivedNames = Set(models.map(\.name))
        for (name, schema) in schemas where !derivedNames.contains(name) {
            if (schema as? [String: Any])?["type"] == nil { problems.append("\(name): no type has this name, and it says no type of its own") }
        }
        components["schemas"] = schemas
        document["components"] = components
        let data = (try? JSONSerialization.data(withJSONObject: document, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return Built(text: String(decoding: data, as: UTF8.self) + "\n", problems: problems, samples: samples)
    }

    private static func derived<T: Codable>(_ type: T.Type, by deriver: SchemaDeriver) throws -> ([String: Any], Data) {
        let (schema, value) = try deriver.derive(type)
        return (schema, try JSONEncoder().encode(value))
    }

    /// The derived schema with the resource's words and bounds laid over it; an annotation of a
    /// field the schema does not have is a problem.
    static func merge(_ derived: [String: Any], _ annotation: [String: Any], at path: String, problems: inout [String]) -> [String: Any] {
        var merged = derived
        for (key, value) in annotation {
            switch key {
            case "properties":
                var properties = derived["properties"] as? [String: Any] ?? [:]
                for (field, words) in value as? [String: Any] ?? [:] {
                    guard let property = properties[field] as? [String: Any] else {
                        problems.append("\(path).\(field): the type has no such field")
                        continue
                    }
                    properties[field] = merge(property, words as? [String: Any] ?? [:], at: "\(path).\(field)", problems: &problems)
                }
                merged["properties"] = properties
            case "items":
                guard let items = derived["items"] as? [String: Any] else {
                    problems.append("\(path): not an array")
                    continue
                }
                merged["items"] = merge(items, value as? [String: Any] ?? [:], at: "\(path)[]", problems: &problems)
            default:
                merged[key] = value
            }
        }
        return merged
    }
}

/// Instants are text (`Codable+Core.swift`): the document's `Instant`.
extension Instant: SchemaLeaf {
    static var schemaLeaf: [String: Any] { ["$ref": "#/components/schemas/Instant"] }
    static var schemaPlaceholder: Instant { Instant(milliseconds: 0) }
}

/// `{"state": "running"}`, `{"state": "expiring", "killAt": INSTANT}` or `{"state": "killed"}`.
extension SchedulerSnapshot.Run.Phase: SchemaLeaf {
    static var schemaLeaf: [String: Any] {
        let state: [String: Any] = ["type": "string", "enum": ["running", "expiring", "killed"]]
        let properties: [String: Any] = ["state": state, "killAt": Instant.schemaLeaf]
        return ["type": "object", "properties": properties, "required": ["state"], "additionalProperties": false]
    }
    static var schemaPlaceholder: Self { .expiring(killAt: Instant(milliseconds: 0)) }
}

/// `"atEnd"`, `"never"` or `{"after": INSTANT}`.
extension TimelinePolicy: SchemaLeaf {
    static var schemaLeaf: [String: Any] {
        let word: [String: Any] = ["type": "string", "enum": ["atEnd", "never"]]
        let after: [String: Any] = ["type": "object", "properties": ["after": Instant.schemaLeaf] as [String: Any],
                                    "required": ["after"], "additionalProperties": false]
        return ["oneOf": [word, after]]
    }
    static var schemaPlaceholder: Self { .atEnd }
}

/// Not `CaseIterable`: its raw values are text here.
extension TimelineSnapshot.Widget.NextReload: SchemaLeaf {
    static var schemaLeaf: [String: Any] { ["type": "string"] }
    static var schemaPlaceholder: Self { .policy }
}
