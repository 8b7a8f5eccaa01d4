// Test stub of AM's com.sun.identity.authentication.callbacks.HiddenValueCallback: an id, a
// value the client may replace (input IDToken1), and the default value.
package com.sun.identity.authentication.callbacks;

import java.io.Serializable;
import javax.security.auth.callback.Callback;

public class HiddenValueCallback implements Callback, Serializable {
  private final String id;
  private final String defaultValue;
  private String value;

  public HiddenValueCallback(String id) {
    this(id, "");
  }

  public HiddenValueCallback(String id, String value) {
    this.id = id;
    this.defaultValue = value;
    this.value = value;
  }

  public String getId() {
    return id;
  }

  public String getValue() {
    return value;
  }

  public void setValue(String value) {
    this.value = value;
  }

  public String getDefaultValue() {
    return defaultValue;
  }
}
