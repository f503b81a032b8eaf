# Packages: `make rpm` and `make deb` build from the `make dist` tarball.
EXTRA_DIST += packaging/loom.spec.in packaging/debian packaging/check-packages.sh LICENSE

# Both package builds unpack the tarball into one directory, PKG_BUILDDIR, one
# after the other. On a Debian host (dpkg-buildflags present) `make rpm` is a
# test of the spec file and builds with the flags a deb gets there
# (dpkg-buildflags with hardening=+all, in that same directory): the compiler
# command lines of the two builds are then identical, and through ccache
# (scripts/test.sh) the second build reuses the first one's objects.
PKG_BUILDDIR = $(abs_builddir)/pkgbuild
PKG_HOST_FLAGS = if command -v dpkg-buildflags >/dev/null; then \
		cd $(PKG_BUILDDIR)/$(PACKAGE)-$(VERSION) && export DEB_BUILD_MAINT_OPTIONS=hardening=+all && \
		export CFLAGS="$$(dpkg-buildflags --get CFLAGS)" CXXFLAGS="$$(dpkg-buildflags --get CXXFLAGS)" \
			CPPFLAGS="$$(dpkg-buildflags --get CPPFLAGS)" LDFLAGS="$$(dpkg-buildflags --get LDFLAGS)" && \
		cd $(abs_builddir); \
	fi

# packaging/loom.spec: config.status remakes it when loom.spec.in is newer.
rpm: dist packaging/loom.spec
	rm -rf $(abs_builddir)/rpmbuild $(PKG_BUILDDIR)
	mkdir -p $(abs_builddir)/rpmbuild/SOURCES $(abs_builddir)/rpmbuild/SPECS $(PKG_BUILDDIR)/$(PACKAGE)-$(VERSION)
	cp $(DIST_ARCHIVES) $(abs_builddir)/rpmbuild/SOURCES/
	cp packaging/loom.spec $(abs_builddir)/rpmbuild/SPECS/
	$(PKG_HOST_FLAGS); \
	rpmbuild --define "_topdir $(abs_builddir)/rpmbuild" --define "_builddir $(PKG_BUILDDIR)" \
		--define "slurm_src $(SLURM_SRC_ARG)" --define "slurm_prefix $(SLURM_PREFIX)" \
		--nodeps -bb $(abs_builddir)/rpmbuild/SPECS/loom.spec
	rm -rf $(PKG_BUILDDIR)
	@ls $(abs_builddir)/rpmbuild/RPMS/*/*.rpm

deb: dist
	rm -rf $(PKG_BUILDDIR)
	mkdir -p $(PKG_BUILDDIR)
	tar -C $(PKG_BUILDDIR) -xf $(PACKAGE)-$(VERSION).tar.xz
	cp -r $(abs_srcdir)/packaging/debian $(PKG_BUILDDIR)/$(PACKAGE)-$(VERSION)/debian
	chmod -R u+w $(PKG_BUILDDIR)/$(PACKAGE)-$(VERSION)/debian
	d=$(PKG_BUILDDIR)/$(PACKAGE)-$(VERSION)/debian; \
	echo "$(SLURM_SRC_ARG)" > $$d/slurm-src; \
	echo "$(SLURM_VERSION_STRING)" > $$d/slurm-version; \
	echo "$(SLURM_VERSION_NEXT_MICRO)" > $$d/slurm-next-micro; \
	echo "$(SLURM_SERIES)" > $$d/slurm-series; \
	echo "$(SLURM_SERIES_NEXT)" > $$d/slurm-series-next; \
	echo "$(SLURM_PREFIX)" > $$d/slurm-prefix; \
	if [ "$(SLURM_PREFIX)" = /usr ]; then echo "/usr/lib/$$(dpkg-architecture -qDEB_HOST_MULTIARCH)/slurm-wlm"; \
	else echo "$(SLURM_PREFIX)/lib/slurm"; fi > $$d/slurm-plugindir
	printf '%s\n' "loom ($(VERSION)-1+slurm$(SLURM_VERSION_STRING)) unstable; urgency=medium" "" "  * Release $(VERSION)." "" \
		" -- loom developers <loom@lists.loom-hpc.org>  $$(date -R)" \
		> $(PKG_BUILDDIR)/$(PACKAGE)-$(VERSION)/debian/changelog
	cd $(PKG_BUILDDIR)/$(PACKAGE)-$(VERSION) && dpkg-buildpackage -b -us -uc -d -j2
	@ls $(PKG_BUILDDIR)/*.deb

.PHONY: rpm deb
