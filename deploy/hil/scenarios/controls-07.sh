# SPDX-License-Identifier: BSD-2-Clause
# roots: trixie
# controls-07: libcamera 0.7.1's control names. The service asks only for controls a camera
# lists, by 0.7's names (a fixed shutter and gain set the ExposureTimeMode/AnalogueGainMode
# that 0.5 added); what the camera lacks is in status camera.lacking (never an error): on vimc
# every exposure and white balance control but not Brightness, which it lists; on the
# virtual camera (it lists FrameDurationLimits and FaceDetectMode only) everything asked. libcamera logs no
# "unknown control", "not valid" or ERROR line; every shutterctl command succeeds.
scenario_run() { HIL_APPEND="hil.virtual=1" single_boot; }
scenario_check() {
    d=$(vm_file stage1)
    vm_sane "$d" || return 1
    grep -q Brightness "$d/cam-controls-vimc.txt" || { echo "libcamera's vimc lists no Brightness (see cam-controls-vimc.txt)"; return 1; }
    grep -q '"ok":false' "$d/shutterctl.log" && { echo "a shutterctl command failed (see shutterctl.log)"; return 1; }
    bad=$(grep -iE 'unknown control|not valid for|\] +ERROR ' "$d/shutterd.log" | head -3)
    [ -z "$bad" ] || { echo "libcamera complained: $bad"; return 1; }
    lv=$(json_get "$d/status-vimc.json" '[.status.camera.lacking[].control] | join(",")')
    lx=$(json_get "$d/status-virtual.json" '[.status.camera.lacking[].control] | join(",")')
    [ "$(json_get "$d/status-vimc.json" .status.camera.model)" = "Sensor B" ] || { echo "not on vimc first"; return 1; }
    [ "$(json_get "$d/status-virtual.json" .status.camera.model)" = imx708-virtual ] || { echo "the switch to Virtual0 did not happen"; return 1; }
    for c in ExposureValue ExposureTime AnalogueGain; do
        case ",$lv," in *",$c,"*) ;; *) echo "vimc: $c not in camera.lacking ($lv)"; return 1 ;; esac
        case ",$lx," in *",$c,"*) ;; *) echo "virtual: $c not in camera.lacking ($lx)"; return 1 ;; esac
    done
    case ",$lv," in *",Brightness,"*) echo "vimc lists Brightness but status calls it lacking ($lv)"; return 1 ;; esac
    case ",$lx," in *",Brightness,"*) ;; *) echo "virtual: Brightness (asked 0.3) not in camera.lacking ($lx)"; return 1 ;; esac
    # "Control: [inout] libcamera::Brightness: [-1.000000..1.000000]" -> "Brightness"
    listed() { sed -n 's/^Control: \(\[[a-z]*\] \)\{0,1\}\([a-z]*::\)\{0,1\}\([A-Za-z]*\).*/\3/p' "$1" | tr '\n' ' '; }
    echo "vimc lists: $(listed "$d/cam-controls-vimc.txt")| the virtual camera: $(listed "$d/cam-controls-virtual.txt")| lacking on vimc: $lv; on the virtual camera: $lx; no unknown-control warning"
}
