// A day's own tables (sweeps, property lists), printed after the report's table and saved under
// "tables" in its JSON.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpu100 {

// A table cell: text to print, and the number behind it (if any) for the JSON.
struct Cell {
  std::string text;
  std::optional<double> number;
  Cell(const char* s) : text(s) {}
  Cell(std::string s) : text(std::move(s)) {}
  Cell(double v);
  Cell(int v);
  Cell(long v);
  Cell(long long v);
  Cell(unsigned long v);
  Cell(unsigned long long v);
};

// A free-form table (sweeps, property lists). Printed after the main table, saved under
// "tables" in the JSON so scripts/plot.py can draw it.
struct Table {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;
  void add_row(std::vector<Cell> row) { rows.push_back(std::move(row)); }
};

}  // namespace gpu100
