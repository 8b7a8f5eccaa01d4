// The device-match script's own test profiles (test/profiles/*.js), as JSON.
// Commented-out members in the originals are simply absent.
enum ScriptProfiles {
  static let stored = #"""
    {
      "identifier": "714524572-2799534390-3707617532",
      "metadata": {
        "hardware": {
          "cpuClass": null,
          "deviceMemory": 8,
          "hardwareConcurrency": 16,
          "maxTouchPoints": 0,
          "oscpu": null,
          "display": {
            "width": 1920,
            "height": 1080,
            "pixelDepth": 24,
            "angle": 270
          }
        },
        "browser": {
          "userAgent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0.3987.163 Safari/537.36 Edg/80.0.361.111",
          "appName": "Netscape",
          "appCodeName": "Mozilla",
          "appVersion": "5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0.3987.163 Safari/537.36 Edg/80.0.361.111",
          "appMinorVersion": null,
          "buildID": null,
          "product": "Gecko",
          "productSub": "20030107",
          "vendor": "Google Inc.",
          "vendorSub": "",
          "browserLanguage": null,
          "plugins": "internal-pdf-viewer;mhjfbmdgcfjbbpaeojofohoefgiehjai;internal-nacl-plugin;"
        },
        "platform": {
          "deviceName": "Mac (Browser)",
          "language": "en-US",
          "platform": "MacIntel",
          "userLanguage": null,
          "systemLanguage": null,
          "fonts": "cursive;monospace;sans-serif;fantasy;Arial;Arial Black;Arial Narrow;Arial Rounded MT Bold;Comic Sans MS;Courier;Courier New;Georgia;Impact;Papyrus;Tahoma;Trebuchet MS;Verdana;",
          "timezone": 300
        }
      },
      "location": {
        "latitude": 30.49843,
        "longitude": -97.639371
      }
    }
    """#
  static let similar = #"""
    {
      "identifier": "714524572-2799534390-3707617532",
      "metadata": {
        "hardware": {
          "cpuClass": null,
          "deviceMemory": 8,
          "hardwareConcurrency": 16,
          "maxTouchPoints": 0,
          "oscpu": null,
          "display": {
            "width": 1080,
            "height": 1920,
            "pixelDepth": 24,
            "angle": 270
          }
        },
        "browser": {
          "userAgent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0.3987.163 Safari/537.36 Edg/80.0.361.111",
          "appName": "Netscape",
          "appCodeName": "Mozilla",
          "appVersion": "5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0.3987.163 Safari/537.36 Edg/80.0.361.111",
          "appMinorVersion": null,
          "buildID": null,
          "product": "Gecko",
          "productSub": "20030107",
          "vendor": "Google Inc.",
          "vendorSub": "",
          "browserLanguage": null,
          "plugins": "internal-pdf-viewer;mhjfbmdgcfjbbpaeojofohoefgiehjai;internal-nacl-plugin;"
        },
        "platform": {
          "deviceName": "Mac (Browser)",
          "language": "en-US",
          "platform": "MacIntel",
          "userLanguage": null,
          "systemLanguage": null,
          "fonts": "cursive;monospace;sans-serif;fantasy;Arial;Arial Black;Arial Narrow;Arial Rounded MT Bold;Comic Sans MS;Courier;Courier New;Georgia;Impact;Papyrus;Tahoma;Trebuchet MS;Verdana;",
          "timezone": 300
        }
      },
      "location": {
        "latitude": 30.49954,
        "longitude": -97.639571
      }
    }
    """#
  static let unmatching = #"""
    {
      "identifier": "714524572-2799534390-3707617532",
      "metadata": {
        "hardware": {
          "cpuClass": null,
          "deviceMemory": 8,
          "hardwareConcurrency": 16,
          "maxTouchPoints": 0,
          "oscpu": null,
          "display": {
            "width": 1080,
            "height": 1920,
            "pixelDepth": 24,
            "angle": 270
          }
        },
        "browser": {
          "userAgent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0.3987.163 Safari/537.36 Edg/80.0.361.111",
          "appName": "Netscape",
          "appCodeName": "Mozilla",
          "appVersion": "5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0.3987.163 Safari/537.36 Edg/80.0.361.111",
          "appMinorVersion": null,
          "buildID": null,
          "product": "Gecko",
          "productSub": "20030107",
          "vendor": "Google Inc.",
          "vendorSub": "",
          "browserLanguage": null,
          "plugins": "internal-pdf-viewer;internal-nacl-plugin;"
        },
        "platform": {
          "deviceName": "Mac (Browser)",
          "language": "en-US",
          "platform": "MacIntel",
          "userLanguage": null,
          "systemLanguage": null,
          "fonts": "cursive;monospace;sans-serif;fantasy;Arial;Arial Black;Arial Narrow;Arial Rounded MT Bold;Comic Sans MS;Courier;Courier New;Georgia;Impact;Papyrus;Tahoma;Trebuchet MS;Verdana;",
          "timezone": 300
        }
      },
      "location": {
        "latitude": 30.53,
        "longitude": -97.4088
      }
    }
    """#
  static let unmatchingWeighted = #"""
    {
      "identifier": "714524572-2799534390-3707617532",
      "metadata": {
        "hardware": {
          "cpuClass": null,
          "deviceMemory": 16,
          "hardwareConcurrency": 16,
          "maxTouchPoints": 0,
          "oscpu": null,
          "display": {
            "width": 1920,
            "height": 1080,
            "pixelDepth": 24,
            "angle": 270
          }
        },
        "browser": {
          "userAgent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0.3987.163 Safari/537.36 Edg/80.0.361.111",
          "appName": "Netscape",
          "appCodeName": "Mozilla",
          "appVersion": "5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0.3987.163 Safari/537.36 Edg/80.0.361.111",
          "appMinorVersion": null,
          "buildID": null,
          "product": "Gecko",
          "productSub": "20030107",
          "vendor": "Google Inc.",
          "vendorSub": "",
          "browserLanguage": null,
          "plugins": "internal-pdf-viewer;mhjfbmdgcfjbbpaeojofohoefgiehjai;internal-nacl-plugin;"
        },
        "platform": {
          "deviceName": "Mac (Browser)",
          "language": "en-US",
          "platform": "MacIntel",
          "userLanguage": null,
          "systemLanguage": null,
          "fonts": "cursive;monospace;sans-serif;fantasy;Arial;Arial Black;Arial Narrow;Arial Rounded MT Bold;Comic Sans MS;Courier;Courier New;Georgia;Impact;Papyrus;Tahoma;Trebuchet MS;Verdana;",
          "timezone": 300
        }
      },
      "location": {
        "latitude": 30.49843,
        "longitude": -97.639371
      }
    }
    """#
  static let missingProps = #"""
    {
      "identifier": "714524572-2799534390-3707617532",
      "metadata": {
        "hardware": {
          "cpuClass": null,
          "deviceMemory": 8,
          "hardwareConcurrency": 16,
          "maxTouchPoints": 0
        },
        "browser": {
          "userAgent": "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0.3987.163 Safari/537.36 Edg/80.0.361.111",
          "appName": "Netscape",
          "appCodeName": "Mozilla",
          "appVersion": "5.0 (Macintosh; Intel Mac OS X 10_14_6) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/80.0.3987.163 Safari/537.36 Edg/80.0.361.111",
          "vendor": "Google Inc.",
          "vendorSub": "",
          "browserLanguage": null,
          "plugins": "internal-pdf-viewer;mhjfbmdgcfjbbpaeojofohoefgiehjai;internal-nacl-plugin;"
        },
        "platform": {
          "deviceName": "Mac (Browser)",
          "language": "en-US",
          "platform": "MacIntel",
          "userLanguage": null,
          "systemLanguage": null,
          "fonts": "cursive;monospace;sans-serif;fantasy;Arial;Arial Black;Arial Narrow;Arial Rounded MT Bold;Comic Sans MS;Courier;Courier New;Georgia;Impact;Papyrus;Tahoma;Trebuchet MS;Verdana;",
          "timezone": 300
        }
      },
      "location": {
        "latitude": 30.49843,
        "longitude": -97.639371
      }
    }
    """#
  static let test = #"""
    {
      "identifier": "ec3f8bbee78406bb-NtheX1L1Z2zjW/c4FrPo3X+zyb97=",
      "metadata": {
        "version": "1.0",
        "platform": {
          "platform": "Android",
          "version": 29,
          "device": "generic_x86_arm",
          "deviceName": "AOSP on IA Emulator",
          "model": "AOSP on IA Emulator",
          "brand": "google",
          "locale": "en_US",
          "timeZone": "America/Vancouver",
          "jailBreakScore": 0
        },
        "someParam": "12345<script>alert(1)</script>",
        "hardware": {
          "hardware": "ranchu",
          "manufacturer": "Google",
          "storage": 774,
          "memory": 1494,
          "cpu": 4,
          "display": {
            "width": 1440,
            "height": 2621,
            "orientation": 1
          },
          "camera": {
            "numberOfCameras": 2
          }
        },
        "browser": {
          "agent": "Dalvik/2.1.0 (Linux; U; Android 9; AOSP on IA Emulator Build/PSR1.180720.117)"
        },
        "bluetooth": {
          "supported": false
        },
        "network": {
          "connected": true
        },
        "telephony": {
          "networkCountryIso": "us",
          "carrierName": "Android"
        }
      },
      "location": {
        "longitude": 49.164553,
        "latitude": -123.177201
      }
    }
    """#
}
