// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The headers that the `arch_*_compiles_with_clang` tests precompile once (clang's
/// `-include-pch`) instead of parsing them again for every product source: the IR types and
/// their codecs, the gate, nlohmann::json and the standard headers most sources use.
#pragma once

#include "core/diag.h"
#include "core/snapshot.h"
#include "verifiers/gate.h"
#include "verifiers/verify.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
