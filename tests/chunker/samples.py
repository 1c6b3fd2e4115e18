"""Small sources per language with the (kind, fully qualified name) chunks they must yield."""

# ruff: noqa: E501

from __future__ import annotations

SAMPLES: dict[str, tuple[str, str, set[tuple[str, str]]]] = {
    "python": (
        "pkg/shapes.py",
        "import math\n\n\nclass Circle:\n    def area(self):\n        return math.pi\n\n\n"
        "def unit():\n    return Circle()\n",
        {("class", "pkg.shapes.Circle"), ("method", "pkg.shapes.Circle.area"),
         ("function", "pkg.shapes.unit")},
    ),
    "javascript": (
        "web/shapes.js",
        "/** A circle. */\nexport class Circle {\n  area() { return 3.14 }\n}\n"
        "function unit() { return new Circle() }\nconst double = (x) => x * 2;\n",
        {("class", "Circle"), ("method", "Circle.area"), ("function", "unit"),
         ("function", "double")},
    ),
    "typescript": (
        "web/shapes.ts",
        "interface Shape { area(): number }\ntype Id = string;\nenum Color { Red }\n"
        "namespace Geo {\n  export class Circle implements Shape {\n    area(): number { return 3 }\n"
        "  }\n}\nexport function unit(): Shape { return new Geo.Circle() }\n",
        {("interface", "Shape"), ("type", "Id"), ("enum", "Color"), ("class", "Geo.Circle"),
         ("method", "Geo.Circle.area"), ("function", "unit")},
    ),
    "tsx": (
        "web/App.tsx",
        "export function App(): JSX.Element {\n  return <div className=\"app\">hi</div>;\n}\n"
        "class Panel extends Component {\n  render() { return <span/> }\n}\n",
        {("function", "App"), ("class", "Panel"), ("method", "Panel.render")},
    ),
    "go": (
        "geo/shapes.go",
        "package geo\n\ntype Circle struct {\n\tR float64\n}\n\ntype Shape interface {\n\tArea() float64\n}\n\n"
        "func (c *Circle) Area() float64 {\n\treturn 3.14 * c.R\n}\n\nfunc Unit() *Circle {\n\treturn &Circle{R: 1}\n}\n",
        {("struct", "geo.Circle"), ("interface", "geo.Shape"), ("method", "geo.Circle.Area"),
         ("function", "geo.Unit")},
    ),
    "rust": (
        "src/geo.rs",
        "/// A circle.\n#[derive(Debug)]\npub struct Circle { r: f64 }\n\npub trait Shape { fn area(&self) -> f64; }\n\n"
        "impl Shape for Circle {\n    fn area(&self) -> f64 { 3.14 * self.r }\n}\n\nenum Color { Red }\n\n"
        "type Radius = f64;\n\nmacro_rules! square { ($x:expr) => { $x * $x } }\n\n"
        "pub mod units {\n    pub fn unit() -> super::Circle { super::Circle { r: 1.0 } }\n}\n",
        {("struct", "geo::Circle"), ("interface", "geo::Shape"), ("class", "geo::Circle"),
         ("method", "geo::Circle::area"), ("enum", "geo::Color"), ("type", "geo::Radius"),
         ("function", "geo::square"), ("function", "geo::units::unit")},
    ),
    "java": (
        "src/geo/Circle.java",
        "package geo;\n\n/** A circle. */\npublic class Circle implements Shape {\n  private double r;\n"
        "  public Circle(double r) { this.r = r; }\n  public double area() { return 3.14 * r; }\n}\n\n"
        "interface Shape { double area(); }\n\nenum Color { RED; void paint() {} }\n",
        {("class", "geo.Circle"), ("method", "geo.Circle.Circle"), ("method", "geo.Circle.area"),
         ("interface", "geo.Shape"), ("enum", "geo.Color"), ("method", "geo.Color.paint")},
    ),
    "csharp": (
        "Geo/Circle.cs",
        "using System;\n\nnamespace Geo.Shapes\n{\n    /// <summary>A circle.</summary>\n"
        "    public class Circle : IShape\n    {\n        public double R { get; set; }\n"
        "        public double Area() { return 3.14 * R; }\n    }\n\n"
        "    public interface IShape { double Area(); }\n    public struct Point { public int X; }\n"
        "    public record Person(string Name);\n    public enum Color { Red }\n}\n",
        {("class", "Geo.Shapes.Circle"), ("method", "Geo.Shapes.Circle.Area"),
         ("interface", "Geo.Shapes.IShape"), ("struct", "Geo.Shapes.Point"),
         ("record", "Geo.Shapes.Person"), ("enum", "Geo.Shapes.Color")},
    ),
    "c": (
        "src/geo.c",
        "#include <math.h>\n\nstruct circle {\n    double r;\n};\n\ntypedef struct { int x; } point;\n\n"
        "enum color { RED };\n\n/* Area of a circle. */\nstatic double area(const struct circle *c) {\n"
        "    return M_PI * c->r * c->r;\n}\n",
        {("struct", "circle"), ("struct", "point"), ("enum", "color"), ("function", "area")},
    ),
    "cpp": (
        "src/geo.cpp",
        "namespace geo {\nclass Circle {\n public:\n  double area() const { return 3.14 * r; }\n"
        "  double r;\n};\n}\n\ndouble geo::Circle::scaled(double k) { return k * r; }\n\n"
        "template <typename T> T twice(T v) { return v + v; }\n",
        {("class", "geo::Circle"), ("method", "geo::Circle::area"),
         ("method", "geo::Circle::scaled"), ("function", "twice")},
    ),
    "ruby": (
        "lib/geo.rb",
        "module Geo\n  # A circle.\n  class Circle\n    def area\n      3.14 * @r\n    end\n\n"
        "    def self.unit\n      new\n    end\n  end\nend\n\ndef helper\n  1\nend\n",
        {("namespace", "Geo"), ("class", "Geo::Circle"), ("method", "Geo::Circle::area"),
         ("method", "Geo::Circle::unit"), ("function", "helper")},
    ),
}  # fmt: skip
