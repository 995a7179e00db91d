import ServiceLifecycle

/// One part of the daemon, run as a service of its one group, named in the group's log and errors.
protocol DaemonService: Service, CustomStringConvertible {}

extension DaemonService {
    /// The group's entry for this service: when it ends on its own (the session bus went away) or fails, the others
    /// shut down gracefully.
    var configuration: ServiceGroupConfiguration.ServiceConfiguration {
        .init(service: self, successTerminationBehavior: .gracefullyShutdownGroup,
              failureTerminationBehavior: .gracefullyShutdownGroup, serviceName: description)
    }
}
