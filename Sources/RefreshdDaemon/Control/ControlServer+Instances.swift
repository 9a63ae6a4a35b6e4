@_spi(Benchmarks) import RefreshdCore
@_spi(Benchmarks) import RefreshdRuntime

/// `instance-add`, `instance-remove`, `instance-list` (issue 23): the runtime decides, the
/// socket names what was missing and replies. Several adds from one client in one loop turn
/// are one commit group (one transaction), as any run of state-changing requests.
extension ControlServer {
    func instance(_ command: ControlCommandName, _ request: ControlRequest, into reply: inout ControlReply) throws {
        guard let template = request.template, !template.isEmpty else {
            throw ControlFailure(code: "bad-request", message: "\"\(request.command)\" needs \"template\": the identifier of a job file with template: true")
        }
        if command == .instanceList {
            guard let list = runtime.instances(of: template) else { throw InstanceError.unknownTemplate(template) }
            var start = 0
            if let after = request.after {
                guard let index = list.firstIndex(where: { $0.key == after }) else {
                    throw InstanceError.unknownInstance(template: template, key: after)
                }
                start = index + 1
            }
            let limit = request.limit ?? ControlRequest.Bounds.instances.upperBound
            let page = list[start...].prefix(limit)
            reply.instances = Array(page)
            if start + page.count < list.count { reply.nextAfter = page.last?.key }
            reply.message = "\(template): \(list.count) instance\(list.count == 1 ? "" : "s")"
                + (page.count < list.count ? " (\(page.count) shown from number \(start + 1))" : "")
            return
        }
        guard let key = request.key else {
            throw ControlFailure(code: "bad-request", message: "\"\(request.command)\" needs \"key\": the instance's key (\(InstanceName.keyExpectation))")
        }
        let identifier = InstanceName.identifier(template: template, key: key)
        if command == .instanceAdd {
            let existed = runtime.instance(identifier) != nil
            try runtime.addInstance(template: template, key: key, values: request.values ?? [:])
            reply.instances = runtime.instance(identifier).map { [$0] }
            reply.message = existed ? "kept \(identifier): it already exists (its request, backoff and retry streak are unchanged)"
                : "added \(identifier)"
        } else {
            let pending = runtime.pending(identifier) != nil
            try runtime.removeInstance(template: template, key: key)
            reply.message = "removed \(identifier)" + (pending ? ": its pending request cancelled" : "")
        }
    }
}
