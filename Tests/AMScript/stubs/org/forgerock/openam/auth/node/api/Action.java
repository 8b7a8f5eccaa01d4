// Test stub of AM's org.forgerock.openam.auth.node.api.Action, as far as a Scripted Decision
// node script uses it: send(callbacks) and goTo(outcome), then build().
package org.forgerock.openam.auth.node.api;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import javax.security.auth.callback.Callback;

public final class Action {
  public final List<Callback> callbacks;
  public final String outcome;

  private Action(List<Callback> callbacks, String outcome) {
    this.callbacks = callbacks;
    this.outcome = outcome;
  }

  public static ActionBuilder send(Callback... callbacks) {
    return new ActionBuilder(new ArrayList<>(Arrays.asList(callbacks)), null);
  }

  public static ActionBuilder send(List<? extends Callback> callbacks) {
    return new ActionBuilder(new ArrayList<>(callbacks), null);
  }

  public static ActionBuilder goTo(String outcome) {
    return new ActionBuilder(new ArrayList<>(), outcome);
  }

  public static final class ActionBuilder {
    private final List<Callback> callbacks;
    private final String outcome;

    ActionBuilder(List<Callback> callbacks, String outcome) {
      this.callbacks = callbacks;
      this.outcome = outcome;
    }

    public Action build() {
      return new Action(callbacks, outcome);
    }
  }
}
