import Collectors
import Foundation
import ProfileJSON
import SystemCalls
import TestSupport

/// The recorded machine trees under Fixtures/machines.
extension FixtureMachine {
  func context(environment: [String: String] = [:]) -> CollectionContext {
    CollectionContext(system: SystemSource(root: root, environment: environment))
  }
}

extension TemporaryTree {
  func context(environment: [String: String] = [:]) -> CollectionContext {
    CollectionContext(system: SystemSource(root: root, environment: environment))
  }
}
