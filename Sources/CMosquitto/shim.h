// SPDX-License-Identifier: BSD-2-Clause
// libmosquitto (Debian libmosquitto-dev, 2.0): the MQTT client of the MQTT part
// (Sources/ShutterService/MQTT). mqtt_protocol.h brings the MQTT 5 property ids
// (response topic, correlation data) and the protocol version constants.
#include <mosquitto.h>
#include <mqtt_protocol.h>
